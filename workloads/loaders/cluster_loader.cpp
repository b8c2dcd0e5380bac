#include "workloads/loaders/cluster_loader.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "workloads/graphs/algorithms.hpp"
#include "workloads/loaders/batch_order.hpp"
#include "workloads/loaders/local_ids.hpp"

namespace tilesim::workloads::loaders {

Clustering cluster_graph(const graphs::EdgeList& graph, std::int32_t num_parts, std::uint64_t seed) {
  if (num_parts < 1) throw std::invalid_argument("num_parts must be at least 1, got " + std::to_string(num_parts));
  Clustering c;
  c.part_of_node = graphs::metis_partition(graph, num_parts, seed);
  c.nodes_of_part.resize(static_cast<std::size_t>(std::min<std::int64_t>(num_parts, graph.num_nodes)));
  for (std::size_t v = 0; v < c.part_of_node.size(); ++v) {
    c.nodes_of_part[static_cast<std::size_t>(c.part_of_node[v])].push_back(static_cast<std::int32_t>(v));
  }
  return c;
}

std::vector<std::vector<std::int32_t>> cluster_batches(std::int32_t num_parts, std::int64_t clusters_per_batch, bool shuffle,
                                                       std::uint64_t seed, std::int64_t epoch) {
  if (num_parts < 0) throw std::invalid_argument("num_parts must not be negative, got " + std::to_string(num_parts));
  std::vector<std::int32_t> parts(static_cast<std::size_t>(num_parts));
  std::iota(parts.begin(), parts.end(), 0);
  return epoch_batches(std::move(parts), clusters_per_batch, shuffle, seed, epoch, "cluster_batches");
}

Batch cluster_batch(const NeighborIndex& index, const Clustering& clustering, const std::vector<std::int32_t>& parts) {
  LocalIds ids(index.num_nodes);
  const auto num_parts = static_cast<std::int32_t>(clustering.nodes_of_part.size());
  std::vector<bool> taken(clustering.nodes_of_part.size(), false);
  for (std::int32_t p : parts) {
    if (p < 0 || p >= num_parts) {
      throw std::invalid_argument("part " + std::to_string(p) + " is not in [0, " + std::to_string(num_parts) + ")");
    }
    if (taken[static_cast<std::size_t>(p)]) throw std::invalid_argument("part " + std::to_string(p) + " is repeated");
    taken[static_cast<std::size_t>(p)] = true;
    for (std::int32_t v : clustering.nodes_of_part[static_cast<std::size_t>(p)]) ids.add(v);
  }
  const bool typed = !index.edge_types.empty();
  Batch batch;
  auto& out = batch.graph;
  out.num_relations = typed ? index.num_relations : 0;
  for (std::int64_t local_dst = 0; local_dst < ids.size(); ++local_dst) {
    const std::int32_t dst = ids.nodes()[static_cast<std::size_t>(local_dst)];
    for (auto slot = static_cast<std::size_t>(index.offsets[static_cast<std::size_t>(dst)]);
         slot < static_cast<std::size_t>(index.offsets[static_cast<std::size_t>(dst) + 1]); ++slot) {
      const std::int32_t local_src = ids.find(index.sources[slot]);
      if (local_src == LocalIds::absent) continue;
      out.src.push_back(local_src);
      out.dst.push_back(static_cast<std::int32_t>(local_dst));
      if (typed) out.edge_type.push_back(index.edge_types[slot]);
    }
  }
  out.num_nodes = ids.size();
  batch.global_nodes = ids.take_nodes();
  return batch;
}

}  // namespace tilesim::workloads::loaders
