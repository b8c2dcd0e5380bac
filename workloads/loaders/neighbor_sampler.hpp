#pragma once
// PyG's NeighborLoader on the host (torch_geometric.loader.NeighborLoader over NeighborSampler, with
// the defaults directed=True, disjoint=False): each batch's seed nodes, then per hop a fixed number of
// in-edges of every node the previous hop reached, relabelled to a local subgraph. The seeds of an
// epoch's batches come from seed_batches. PyG's common setting, examples/reddit.py: num_neighbors
// [25, 10], batch_size 1024, shuffle=True over the training nodes.
#include <cstdint>
#include <vector>

#include "workloads/graphs/graph.hpp"
#include "workloads/loaders/batch.hpp"

namespace tilesim::workloads::loaders {

struct NeighborIndex {                    // in-edges grouped by destination (CSC), built once per graph
  std::int64_t num_nodes = 0;
  std::vector<std::int64_t> offsets;      // num_nodes + 1
  std::vector<std::int32_t> sources;      // the sources of each destination's in-edges, in edge-list order
  std::vector<std::int32_t> edge_types;   // parallel to sources when the graph has relation types, else empty
  std::int32_t num_relations = 0;         // the graph's, carried into the batches

  std::int64_t in_degree(std::int32_t node) const {
    return offsets[static_cast<std::size_t>(node) + 1] - offsets[static_cast<std::size_t>(node)];
  }
};
NeighborIndex build_neighbor_index(const graphs::EdgeList& graph);

// Hop k samples, for every node of the current frontier, min(fanouts[k], in-degree) distinct in-edges
// uniformly without replacement (all of them when fanouts[k] is -1 or >= in-degree, none when 0); with
// replace=true, fanouts[k] draws with replacement when in-degree > 0 (an edge may repeat). Nodes are
// relabelled in order of first appearance: the seeds first (local 0..S-1 in the order given), then
// each hop's new nodes. The next frontier is the nodes first seen in this hop. Each sampled edge is
// (local source -> local destination), grouped by hop, then by frontier node, in edge-list order
// within a node (draws with replacement in draw order). The graph's relation types are kept.
// Deterministic in `seed` (batch_seed in batch_order.hpp gives one per batch). Throws
// std::invalid_argument for a seed out of range, a repeated seed or a fanout below -1.
Batch sample_neighbors(const NeighborIndex& index, const std::vector<std::int32_t>& seeds,
                       const std::vector<std::int64_t>& fanouts, bool replace, std::uint64_t seed);

// The seed nodes of each batch of an epoch: `input_nodes` (in order, or shuffled when `shuffle`, by a
// stream keyed on seed and epoch) cut into batches of batch_size (the last one may be smaller).
std::vector<std::vector<std::int32_t>> seed_batches(const std::vector<std::int32_t>& input_nodes, std::int64_t batch_size,
                                                    bool shuffle, std::uint64_t seed, std::int64_t epoch);

}  // namespace tilesim::workloads::loaders
