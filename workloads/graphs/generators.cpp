// Generators on Boost.Graph's iterators (Erdos-Renyi, R-MAT, PLOD, small world) and the molecule
// batches. The power-law (Chung-Lu) generator is in power_law.cpp.
#include "workloads/graphs/generators.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/erdos_renyi_generator.hpp>
#include <boost/graph/plod_generator.hpp>
#include <boost/graph/rmat_graph_generator.hpp>
#include <boost/graph/small_world_generator.hpp>

#include "workloads/graphs/graph_random.hpp"
#include "workloads/random_streams.hpp"

namespace tilesim::workloads::graphs {

namespace {

// The generator iterators only read the graph type's traits (directed or not, size types).
using DirectedTraits = boost::compressed_sparse_row_graph<boost::directedS>;

template <class Iterator>
EdgeList collect(Iterator first, Iterator last, std::int64_t num_nodes, std::int64_t expected_edges) {
  EdgeList out;
  out.num_nodes = num_nodes;
  if (expected_edges > 0) {
    out.src.reserve(static_cast<std::size_t>(expected_edges));
    out.dst.reserve(static_cast<std::size_t>(expected_edges));
  }
  for (; first != last; ++first) {
    out.src.push_back(static_cast<std::int32_t>(first->first));
    out.dst.push_back(static_cast<std::int32_t>(first->second));
  }
  return out;
}

// PLOD's degree of a node whose draw is x (Boost's undirected_plod_iterator: at least 1, below n).
double plod_degree(double beta, double alpha, std::int64_t x, std::int64_t n) {
  double d = x == 0 ? 0 : std::floor(beta * std::pow(static_cast<double>(x), -alpha));
  return std::clamp(d, 1.0, static_cast<double>(n - 1));
}

}  // namespace

EdgeList erdos_renyi(const ErdosRenyiParams& params, std::uint64_t seed) {
  auto engine = graph_engine(seed, stream::generator);
  using Iterator = boost::erdos_renyi_iterator<std::mt19937_64, DirectedTraits>;
  Iterator first(engine, static_cast<std::size_t>(params.num_nodes), static_cast<std::size_t>(params.num_edges),
                 params.self_loops);
  return collect(first, Iterator(), params.num_nodes, params.num_edges);
}

EdgeList rmat(const RmatParams& params, std::uint64_t seed) {
  auto engine = graph_engine(seed, stream::generator);
  using Iterator = boost::rmat_iterator<std::mt19937_64, DirectedTraits>;
  // Boost's iterator reaches its end one edge early (it counts the edge it generates on construction),
  // so ask for one more and keep num_edges.
  Iterator first(engine, static_cast<std::size_t>(params.num_nodes), static_cast<std::size_t>(params.num_edges + 1),
                 params.a, params.b, params.c, params.d, /*permute_vertices=*/true);
  EdgeList out = collect(first, Iterator(), params.num_nodes, params.num_edges + 1);
  out.src.resize(std::min(out.src.size(), static_cast<std::size_t>(params.num_edges)));
  out.dst.resize(out.src.size());
  return out;
}

EdgeList plod(const PlodParams& params, std::uint64_t seed) {
  auto engine = graph_engine(seed, stream::generator);
  // The undirected iterator: Boost's directed one starts with a spurious (0, 0) edge and does not
  // bound the degrees.
  using Iterator = boost::undirected_plod_iterator<std::mt19937_64>;
  Iterator first(engine, static_cast<std::size_t>(params.num_nodes), params.alpha, params.beta, /*allow_self_loops=*/false);
  return collect(first, Iterator(), params.num_nodes, 0);
}

namespace {

// The sum of plod_degree over x in [a, b] estimated by the integral of beta t^-alpha (clamped to
// [1, n - 1]) over [a - 1/2, b + 1/2], less 1/2 per unclamped x for the floor: where the exact sum
// would take too many steps (plod_average_degree).
double plod_degree_sum_estimate(std::int64_t a, std::int64_t b, std::int64_t n, double alpha, double beta) {
  const double top = static_cast<double>(n - 1);
  const double from = static_cast<double>(a) - 0.5, to = static_cast<double>(b) + 0.5;
  // beta t^-alpha >= n - 1 up to t_top, <= 1 from t_one on.
  const double t_top = std::clamp(std::pow(beta / top, 1.0 / alpha), from, to);
  const double t_one = std::clamp(std::pow(beta, 1.0 / alpha), from, to);
  auto integral = [&](double t) {
    return alpha == 1.0 ? beta * std::log(t) : beta * std::pow(t, 1.0 - alpha) / (1.0 - alpha);
  };
  double sum = top * (t_top - from) + (to - t_one);
  if (t_one > t_top) sum += integral(t_one) - integral(t_top) - 0.5 * (t_one - t_top);
  return sum;
}

}  // namespace

double plod_average_degree(std::int64_t num_nodes, double alpha, double beta) {
  // The mean of plod_degree over x uniform in [0, n). Draws with beta * x^-alpha < 1 give degree 1,
  // so only x below beta^(1/alpha) need summing.
  const double cutoff = std::pow(beta, 1.0 / alpha);
  const std::int64_t last =
      cutoff >= static_cast<double>(num_nodes - 1) ? num_nodes - 1 : static_cast<std::int64_t>(cutoff) + 1;
  // Summed in runs of x of equal degree (the degree falls as x grows), one step per run: the sum of the
  // plain loop over every x to the last bit (integer terms; exact below 2^53). That loop ran once per
  // node: 2^31 steps for "num_nodes": 2147483647, "alpha": 0.001, minutes of parsing a workload for one
  // call, and plod_beta_for_average_degree makes a hundred calls. Past 2^14 runs, the rest is estimated
  // (plod_degree_sum_estimate; within 2e-5 of the exact mean where both were computed).
  constexpr std::int64_t max_runs = std::int64_t{1} << 14;
  double sum = plod_degree(beta, alpha, 0, num_nodes);
  std::int64_t runs = 0;
  for (std::int64_t x = 1; x <= last;) {
    if (++runs > max_runs) {
      sum += plod_degree_sum_estimate(x, last, num_nodes, alpha, beta);
      break;
    }
    const double d = plod_degree(beta, alpha, x, num_nodes);
    std::int64_t end = last;  // the run's last x; degree 1 lasts to the end
    if (d > 1) {
      // floor(beta x^-alpha) >= d  <=>  x <= (beta / d)^(1/alpha); pow's rounding is put right by a step or two.
      const double bound = std::pow(beta / d, 1.0 / alpha);
      end = bound >= static_cast<double>(last) ? last : std::max(x, static_cast<std::int64_t>(bound));
      while (end > x && plod_degree(beta, alpha, end, num_nodes) != d) --end;
      while (end < last && plod_degree(beta, alpha, end + 1, num_nodes) == d) ++end;
    }
    sum += d * static_cast<double>(end - x + 1);
    x = end + 1;
  }
  sum += static_cast<double>(num_nodes - 1 - last);
  return sum / static_cast<double>(num_nodes);
}

double plod_beta_for_average_degree(std::int64_t num_nodes, double alpha, double average_degree) {
  // Every beta up to 1 gives every node degree 1 (the least average): 1 rather than the 2^-60 the search
  // below ends on, which gives the same graph but is no beta a workload may state, so the echo of such a
  // workload was not valid input (found by fuzzing the workload reader's echo).
  if (plod_average_degree(num_nodes, alpha, 1.0) >= average_degree) return 1.0;
  double low = 0, high = 1;
  while (plod_average_degree(num_nodes, alpha, high) < average_degree && high < 1e15) high *= 2;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (low + high);
    (plod_average_degree(num_nodes, alpha, mid) < average_degree ? low : high) = mid;
  }
  return high;
}

EdgeList small_world(const SmallWorldParams& params, std::uint64_t seed) {
  auto engine = graph_engine(seed, stream::generator);
  using Iterator = boost::small_world_iterator<std::mt19937_64, DirectedTraits>;
  Iterator first(engine, static_cast<std::size_t>(params.num_nodes), static_cast<std::size_t>(params.k),
                 params.rewire_probability, /*allow_self_loops=*/false);
  return collect(first, Iterator(), params.num_nodes, params.num_nodes * (params.k / 2));
}

void append_molecule(EdgeList& out, std::int64_t num_atoms, MoleculeConnectivity connectivity, std::int64_t k,
                     std::mt19937_64& engine) {
  if (out.num_nodes + num_atoms > std::numeric_limits<std::int32_t>::max()) {
    throw std::length_error("molecule batch exceeds 2^31 - 1 nodes");
  }
  const auto offset = static_cast<std::int32_t>(out.num_nodes);
  std::vector<std::array<double, 3>> position(static_cast<std::size_t>(num_atoms));
  for (auto& p : position) {
    for (double& c : p) c = streams::unit(engine);
  }
  const std::int64_t neighbours =
      connectivity == MoleculeConnectivity::complete ? num_atoms - 1 : std::min(k, num_atoms - 1);
  std::vector<std::pair<double, std::int32_t>> by_distance;
  for (std::int32_t i = 0; i < num_atoms; ++i) {
    by_distance.clear();
    for (std::int32_t j = 0; j < num_atoms; ++j) {
      if (j == i) continue;
      double d2 = 0;
      for (int c = 0; c < 3; ++c) {
        const double delta = position[static_cast<std::size_t>(i)][c] - position[static_cast<std::size_t>(j)][c];
        d2 += delta * delta;
      }
      by_distance.emplace_back(connectivity == MoleculeConnectivity::complete ? 0.0 : d2, j);
    }
    // Complete graphs keep source order; kNN sorts by distance (ties by index) and keeps k.
    std::stable_sort(by_distance.begin(), by_distance.end());
    for (std::int64_t r = 0; r < neighbours; ++r) {
      out.src.push_back(offset + by_distance[static_cast<std::size_t>(r)].second);
      out.dst.push_back(offset + i);
    }
  }
  out.num_nodes += num_atoms;
  out.graph_of_node.insert(out.graph_of_node.end(), static_cast<std::size_t>(num_atoms),
                           static_cast<std::int32_t>(out.num_graphs));
  ++out.num_graphs;
}

EdgeList molecules(const MoleculeParams& params, std::uint64_t seed) {
  auto engine = graph_engine(seed, stream::generator);
  EdgeList out;
  for (std::int64_t g = 0; g < params.num_graphs; ++g) {
    const std::int64_t n =
        params.min_nodes + static_cast<std::int64_t>(bounded(engine, static_cast<std::uint64_t>(params.max_nodes - params.min_nodes + 1)));
    append_molecule(out, n, params.connectivity, params.k, engine);
  }
  return out;
}

}  // namespace tilesim::workloads::graphs
