#pragma once
// Cluster-GCN's mini-batches (Chiang et al. 2019), as PyG's ClusterData + ClusterLoader make them
// (torch_geometric/loader/cluster.py): METIS k-way parts of the graph (ClusterData's default,
// recursive=False), then per batch a group of parts merged into one subgraph that keeps the edges
// between its parts. PyG's examples/cluster_gcn_reddit.py: num_parts 1500, batch_size 20 parts,
// shuffle=True.
#include <cstdint>
#include <vector>

#include "workloads/graphs/graph.hpp"
#include "workloads/loaders/batch.hpp"
#include "workloads/loaders/neighbor_sampler.hpp"

namespace tilesim::workloads::loaders {

struct Clustering {
  std::vector<std::int32_t> part_of_node;                // METIS part of every node
  std::vector<std::vector<std::int32_t>> nodes_of_part;  // ascending node ids per part
};
// graphs::metis_partition, which caps num_parts at the node count: nodes_of_part has
// min(num_parts, num_nodes) entries (a part METIS leaves empty stays, empty). Deterministic in `seed`.
Clustering cluster_graph(const graphs::EdgeList& graph, std::int32_t num_parts, std::uint64_t seed);

// Each batch's parts: a permutation of 0..num_parts-1 (shuffled when `shuffle`, by a stream keyed on
// seed and epoch) cut into groups of clusters_per_batch.
std::vector<std::vector<std::int32_t>> cluster_batches(std::int32_t num_parts, std::int64_t clusters_per_batch, bool shuffle,
                                                       std::uint64_t seed, std::int64_t epoch);

// The subgraph of the chosen parts: their nodes (part by part in the order given, ascending within a
// part; global_nodes maps them back) and every edge whose two ends both lie in them, relabelled.
// The edges come grouped by local destination, in edge-list order within one (PyG groups them by
// source, its CSR order: the same edges, in another order). Relation types are kept. O(in-edges of
// the batch's nodes), with the NeighborIndex of the full graph. Throws std::invalid_argument for a
// part out of range or repeated.
Batch cluster_batch(const NeighborIndex& index, const Clustering& clustering, const std::vector<std::int32_t>& parts);

}  // namespace tilesim::workloads::loaders
