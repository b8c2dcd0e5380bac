#include "workloads/loaders/neighbor_sampler.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "workloads/graphs/graph_random.hpp"
#include "workloads/loaders/batch_order.hpp"
#include "workloads/loaders/local_ids.hpp"
#include "workloads/random_streams.hpp"

namespace tilesim::workloads::loaders {

namespace {

// Floyd's subset sampling costs O(k^2) with a linear membership test, whatever the degree; above this
// many picks a partial Fisher-Yates over the degree's positions (O(degree)) is cheaper.
constexpr std::int64_t floyd_max_picks = 64;

// `picks` distinct positions in [0, degree), uniformly, ascending (so the edges keep edge-list order).
void choose_without_replacement(std::int64_t degree, std::int64_t picks, std::mt19937_64& engine,
                                std::vector<std::int64_t>& chosen) {
  chosen.clear();
  if (picks <= floyd_max_picks) {
    for (std::int64_t j = degree - picks; j < degree; ++j) {
      const auto t = static_cast<std::int64_t>(graphs::bounded(engine, static_cast<std::uint64_t>(j + 1)));
      chosen.push_back(std::find(chosen.begin(), chosen.end(), t) == chosen.end() ? t : j);
    }
  } else {
    chosen.resize(static_cast<std::size_t>(degree));
    for (std::int64_t i = 0; i < degree; ++i) chosen[static_cast<std::size_t>(i)] = i;
    for (std::int64_t i = 0; i < picks; ++i) {
      const auto j = i + static_cast<std::int64_t>(graphs::bounded(engine, static_cast<std::uint64_t>(degree - i)));
      std::swap(chosen[static_cast<std::size_t>(i)], chosen[static_cast<std::size_t>(j)]);
    }
    chosen.resize(static_cast<std::size_t>(picks));
  }
  std::sort(chosen.begin(), chosen.end());
}

}  // namespace

NeighborIndex build_neighbor_index(const graphs::EdgeList& graph) {
  NeighborIndex index;
  index.num_nodes = graph.num_nodes;
  index.num_relations = graph.num_relations;
  const bool typed = !graph.edge_type.empty();
  index.offsets.assign(static_cast<std::size_t>(graph.num_nodes) + 1, 0);
  for (std::int32_t d : graph.dst) ++index.offsets[static_cast<std::size_t>(d) + 1];
  for (std::size_t v = 0; v < static_cast<std::size_t>(graph.num_nodes); ++v) index.offsets[v + 1] += index.offsets[v];
  index.sources.resize(graph.src.size());
  if (typed) index.edge_types.resize(graph.src.size());
  // A stable counting sort: each destination's in-edges stay in edge-list order.
  std::vector<std::int64_t> next(index.offsets.begin(), index.offsets.end() - 1);
  for (std::size_t e = 0; e < graph.src.size(); ++e) {
    const auto slot = static_cast<std::size_t>(next[static_cast<std::size_t>(graph.dst[e])]++);
    index.sources[slot] = graph.src[e];
    if (typed) index.edge_types[slot] = graph.edge_type[e];
  }
  return index;
}

Batch sample_neighbors(const NeighborIndex& index, const std::vector<std::int32_t>& seeds,
                       const std::vector<std::int64_t>& fanouts, bool replace, std::uint64_t seed) {
  for (std::int64_t fanout : fanouts) {
    if (fanout < -1) throw std::invalid_argument("fanout must be -1 (all) or at least 0, got " + std::to_string(fanout));
  }
  LocalIds ids(index.num_nodes);
  for (std::int32_t s : seeds) {
    if (s < 0 || s >= index.num_nodes) {
      throw std::invalid_argument("seed node " + std::to_string(s) + " is not in [0, " + std::to_string(index.num_nodes) + ")");
    }
    if (ids.find(s) != LocalIds::absent) throw std::invalid_argument("seed node " + std::to_string(s) + " is repeated");
    ids.add(s);
  }
  const bool typed = !index.edge_types.empty();
  Batch batch;
  batch.num_seed_nodes = static_cast<std::int64_t>(seeds.size());
  auto& out = batch.graph;
  out.num_relations = typed ? index.num_relations : 0;
  auto engine = streams::named_engine(seed, "neighbor_sampler");
  std::vector<std::int64_t> chosen;
  std::int64_t frontier_begin = 0, frontier_end = ids.size();
  for (std::int64_t fanout : fanouts) {
    for (std::int64_t local_dst = frontier_begin; local_dst < frontier_end; ++local_dst) {
      const std::int32_t dst = ids.nodes()[static_cast<std::size_t>(local_dst)];
      const std::int64_t first = index.offsets[static_cast<std::size_t>(dst)];
      const std::int64_t degree = index.in_degree(dst);
      if (degree == 0 || fanout == 0) continue;
      chosen.clear();
      if (fanout == -1 || (!replace && fanout >= degree)) {
        for (std::int64_t i = 0; i < degree; ++i) chosen.push_back(i);
      } else if (replace) {
        for (std::int64_t i = 0; i < fanout; ++i) {
          chosen.push_back(static_cast<std::int64_t>(graphs::bounded(engine, static_cast<std::uint64_t>(degree))));
        }
      } else {
        choose_without_replacement(degree, fanout, engine, chosen);
      }
      for (std::int64_t position : chosen) {
        const auto slot = static_cast<std::size_t>(first + position);
        out.src.push_back(ids.add(index.sources[slot]));
        out.dst.push_back(static_cast<std::int32_t>(local_dst));
        if (typed) out.edge_type.push_back(index.edge_types[slot]);
      }
    }
    frontier_begin = frontier_end;
    frontier_end = ids.size();
  }
  out.num_nodes = ids.size();
  batch.global_nodes = ids.take_nodes();
  return batch;
}

std::vector<std::vector<std::int32_t>> seed_batches(const std::vector<std::int32_t>& input_nodes, std::int64_t batch_size,
                                                    bool shuffle, std::uint64_t seed, std::int64_t epoch) {
  return epoch_batches(input_nodes, batch_size, shuffle, seed, epoch, "seed_batches");
}

}  // namespace tilesim::workloads::loaders
