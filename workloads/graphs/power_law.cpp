// Chung-Lu power-law graphs with blocks: weights by rank, alias tables per block, sampling in fixed
// chunks with one random stream each (the same graph for any number of threads).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "workloads/graphs/generators.hpp"
#include "workloads/graphs/graph_random.hpp"
#include "workloads/random_streams.hpp"

namespace tilesim::workloads::graphs {

namespace {

constexpr std::int64_t pairs_per_chunk = std::int64_t{1} << 20;

// Sum of (r + r0)^-alpha over r in [0, n): exact for the first terms, the midpoint integral for the
// tail (accurate to well under 1% for the smooth tail).
double weight_sum(std::int64_t n, double r0, double alpha) {
  constexpr std::int64_t exact_terms = 100000;
  const std::int64_t head = std::min(n, exact_terms);
  double sum = 0;
  for (std::int64_t r = 0; r < head; ++r) sum += std::pow(static_cast<double>(r) + r0, -alpha);
  if (n > head) {
    const double a = static_cast<double>(head) - 0.5 + r0, b = static_cast<double>(n) - 0.5 + r0;
    sum += std::abs(alpha - 1.0) < 1e-12 ? std::log(b / a) : (std::pow(b, 1 - alpha) - std::pow(a, 1 - alpha)) / (1 - alpha);
  }
  return sum;
}

// The offset r0 for which the top weight is `ratio` times the mean weight (ratio > 1).
double fit_rank_offset(std::int64_t n, double alpha, double ratio) {
  auto top_over_mean = [&](double r0) { return std::pow(r0, -alpha) * static_cast<double>(n) / weight_sum(n, r0, alpha); };
  double low = std::log(1e-9), high = std::log(1e15);  // top_over_mean falls as r0 grows
  for (int i = 0; i < 80; ++i) {
    const double mid = 0.5 * (low + high);
    (top_over_mean(std::exp(mid)) > ratio ? low : high) = mid;
  }
  return std::exp(0.5 * (low + high));
}

// Walker's alias method (Vose's construction) over weights[begin, end): sampling picks a slot
// uniformly, then keeps it with probability keep or takes its alias. A slot holds everything a draw
// needs (both node ids and the block), so one draw touches one cache line: at ogbn-products' 2.4M nodes
// the tables are far larger than the caches and misses set the generation time.
struct Slot {
  float keep = 1;
  std::int32_t node = 0;        // node id of this slot
  std::int32_t alias_node = 0;  // node id of its alias (same block)
  std::int32_t block = 0;
};

struct AliasTable {
  std::vector<Slot> slots;

  // Fills slots[begin, end): `weights` by slot, `node_of_slot` the node id each slot stands for.
  void build_slice(const std::vector<double>& weights, const std::vector<std::int32_t>& node_of_slot, std::int64_t begin,
                   std::int64_t end, std::int32_t block) {
    const std::int64_t n = end - begin;
    double total = 0;
    for (std::int64_t i = begin; i < end; ++i) total += weights[static_cast<std::size_t>(i)];
    std::vector<double> scaled(static_cast<std::size_t>(n));
    std::vector<std::int64_t> small, large;
    for (std::int64_t i = 0; i < n; ++i) {
      scaled[static_cast<std::size_t>(i)] = weights[static_cast<std::size_t>(begin + i)] * static_cast<double>(n) / total;
      (scaled[static_cast<std::size_t>(i)] < 1.0 ? small : large).push_back(i);
      Slot& slot = slots[static_cast<std::size_t>(begin + i)];
      slot.node = slot.alias_node = node_of_slot[static_cast<std::size_t>(begin + i)];
      slot.keep = 1.0f;
      slot.block = block;
    }
    while (!small.empty() && !large.empty()) {
      const std::int64_t s = small.back(), l = large.back();
      small.pop_back();
      Slot& slot = slots[static_cast<std::size_t>(begin + s)];
      slot.keep = static_cast<float>(scaled[static_cast<std::size_t>(s)]);
      slot.alias_node = node_of_slot[static_cast<std::size_t>(begin + l)];
      scaled[static_cast<std::size_t>(l)] -= 1.0 - scaled[static_cast<std::size_t>(s)];
      if (scaled[static_cast<std::size_t>(l)] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
  }

  // A node of slots[begin, begin + size) by weight; `block` receives its block.
  std::int32_t sample(std::mt19937_64& engine, std::int64_t begin, std::int64_t size, std::int32_t& block) const {
    const Slot& slot = slots[static_cast<std::size_t>(begin + static_cast<std::int64_t>(bounded(engine, static_cast<std::uint64_t>(size))))];
    block = slot.block;
    return streams::unit(engine) < slot.keep ? slot.node : slot.alias_node;
  }
};

}  // namespace

EdgeList power_law(const PowerLawParams& params, std::uint64_t seed) {
  const std::int64_t n = params.num_nodes;
  const std::int64_t num_blocks = std::clamp<std::int64_t>(params.num_blocks, 1, n);
  const double mean_degree = static_cast<double>(params.num_edges) / static_cast<double>(n);
  const double alpha = 1.0 / (params.exponent - 1.0);

  // Weights by rank, then dealt to positions at random; positions are grouped into blocks.
  std::vector<double> weight(static_cast<std::size_t>(n), 1.0);
  if (params.max_degree > mean_degree * 1.000001) {
    const double r0 = fit_rank_offset(n, alpha, params.max_degree / mean_degree);
    for (std::int64_t r = 0; r < n; ++r) weight[static_cast<std::size_t>(r)] = std::pow(static_cast<double>(r) + r0, -alpha);
  }
  auto engine = graph_engine(seed, stream::permutation);
  for (std::int64_t i = n - 1; i > 0; --i) {
    std::swap(weight[static_cast<std::size_t>(i)], weight[bounded(engine, static_cast<std::uint64_t>(i + 1))]);
  }
  std::vector<std::int32_t> node_of_position(static_cast<std::size_t>(n));
  std::iota(node_of_position.begin(), node_of_position.end(), 0);
  for (std::int64_t i = n - 1; i > 0; --i) {
    std::swap(node_of_position[static_cast<std::size_t>(i)], node_of_position[bounded(engine, static_cast<std::uint64_t>(i + 1))]);
  }

  std::vector<std::int64_t> block_begin(static_cast<std::size_t>(num_blocks + 1));
  for (std::int64_t b = 0; b <= num_blocks; ++b) block_begin[static_cast<std::size_t>(b)] = b * n / num_blocks;
  AliasTable within{std::vector<Slot>(static_cast<std::size_t>(n))};
  std::vector<double> block_weight(static_cast<std::size_t>(num_blocks), 0.0);
  double total_weight = 0;
  for (std::int64_t b = 0; b < num_blocks; ++b) {
    const std::int64_t lo = block_begin[static_cast<std::size_t>(b)], hi = block_begin[static_cast<std::size_t>(b + 1)];
    within.build_slice(weight, node_of_position, lo, hi, static_cast<std::int32_t>(b));
    for (std::int64_t p = lo; p < hi; ++p) block_weight[static_cast<std::size_t>(b)] += weight[static_cast<std::size_t>(p)];
    total_weight += block_weight[static_cast<std::size_t>(b)];
  }
  std::vector<std::int32_t> block_ids(static_cast<std::size_t>(num_blocks));
  std::iota(block_ids.begin(), block_ids.end(), 0);
  AliasTable across{std::vector<Slot>(static_cast<std::size_t>(num_blocks))};
  across.build_slice(block_weight, block_ids, 0, num_blocks, 0);

  // A destination drawn from all nodes lands in the source's block with probability sum_b (W_b/W)^2;
  // the direct in-block probability tops that up to the requested share.
  double chance_same_block = 0;
  for (double w : block_weight) chance_same_block += (w / total_weight) * (w / total_weight);
  double in_block = 0;
  if (num_blocks > 1 && params.intra_block_fraction > chance_same_block) {
    in_block = (params.intra_block_fraction - chance_same_block) / (1.0 - chance_same_block);
  }

  auto draw_within = [&](std::mt19937_64& e, std::int32_t b, std::int32_t& block) {
    const std::int64_t lo = block_begin[static_cast<std::size_t>(b)];
    return within.sample(e, lo, block_begin[static_cast<std::size_t>(b) + 1] - lo, block);
  };
  auto draw_any = [&](std::mt19937_64& e, std::int32_t& block) {
    std::int32_t unused = 0;
    const std::int32_t b = num_blocks == 1 ? 0 : across.sample(e, 0, num_blocks, unused);
    return draw_within(e, b, block);
  };

  const std::int64_t num_pairs = params.symmetric ? params.num_edges / 2 : params.num_edges;
  const std::int64_t edges_per_pair = params.symmetric ? 2 : 1;
  EdgeList out;
  out.num_nodes = n;
  out.src.resize(static_cast<std::size_t>(num_pairs * edges_per_pair));
  out.dst.resize(static_cast<std::size_t>(num_pairs * edges_per_pair));
  const std::int64_t num_chunks = (num_pairs + pairs_per_chunk - 1) / pairs_per_chunk;
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t c = 0; c < num_chunks; ++c) {
    auto e = graph_engine(seed, stream::chunk_base + static_cast<std::uint64_t>(c));
    const std::int64_t first = c * pairs_per_chunk, last = std::min(num_pairs, first + pairs_per_chunk);
    for (std::int64_t k = first; k < last; ++k) {
      std::int32_t block_u = 0, block_v = 0;
      const std::int32_t su = draw_any(e, block_u);
      const std::int32_t sv = in_block > 0 && streams::unit(e) < in_block ? draw_within(e, block_u, block_v) : draw_any(e, block_v);
      const auto at = static_cast<std::size_t>(k * edges_per_pair);
      out.src[at] = su;
      out.dst[at] = sv;
      if (params.symmetric) {
        out.src[at + 1] = sv;
        out.dst[at + 1] = su;
      }
    }
  }
  return out;
}

}  // namespace tilesim::workloads::graphs
