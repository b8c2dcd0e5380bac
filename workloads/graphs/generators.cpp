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

double plod_average_degree(std::int64_t num_nodes, double alpha, double beta) {
  // The mean of plod_degree over x uniform in [0, n). Draws with beta * x^-alpha < 1 give degree 1,
  // so only x below beta^(1/alpha) need summing.
  const double cutoff = std::pow(beta, 1.0 / alpha);
  const std::int64_t last =
      cutoff >= static_cast<double>(num_nodes - 1) ? num_nodes - 1 : static_cast<std::int64_t>(cutoff) + 1;
  double sum = 0;
  for (std::int64_t x = 0; x <= last; ++x) sum += plod_degree(beta, alpha, x, num_nodes);
  sum += static_cast<double>(num_nodes - 1 - last);
  return sum / static_cast<double>(num_nodes);
}

double plod_beta_for_average_degree(std::int64_t num_nodes, double alpha, double average_degree) {
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
