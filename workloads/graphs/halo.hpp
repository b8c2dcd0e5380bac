#pragma once
// METIS partitions of a graph with their halos: what each CPU node of a partitioned GNN step (DistGNN's
// scheme) owns and what it must receive from the others every layer.
#include <cstdint>
#include <vector>

#include "workloads/graphs/graph.hpp"

namespace tilesim::workloads::graphs {

// One partition's share. An edge belongs to the partition that owns its destination (the node that
// aggregates the message); it is local when its source is owned there too, a cut edge when the source
// is remote. The halo is the set of distinct remote sources the partition's cut edges read.
struct PartitionHalo {
  std::int64_t owned_nodes = 0;
  std::int64_t halo_nodes = 0;
  std::int64_t local_edges = 0;
  std::int64_t cut_edges = 0;
};

// Per partition, from a node -> partition assignment (any, not only METIS's: algorithms.hpp's
// metis_partition gives METIS's). Throws std::invalid_argument when the assignment's size is not the
// node count or a part lies outside [0, partitions).
std::vector<PartitionHalo> halo_statistics(const EdgeList& graph, const std::vector<std::int32_t>& part_of_node,
                                           std::int32_t partitions);

// METIS k-way partitions of `graph` (algorithms.hpp's metis_partition: minimum edge cut of the
// undirected simple graph, deterministic in `seed`) and each one's halo. Throws std::invalid_argument
// when partitions < 1 or exceeds the node count (METIS would leave parts empty).
std::vector<PartitionHalo> metis_halo(const EdgeList& graph, std::int32_t partitions, std::uint64_t seed);

// Halo statistics measured on a scaled-down stand-in of a graph too large to build here (the preset
// ogbn-papers100m-1pct for ogbn-papers100m), carried to the full graph of full_nodes nodes and
// full_edges edges: each partition's owned and halo nodes times full_nodes / (measured nodes), its
// local and cut edges times full_edges / (measured edges), rounded to the nearest integer, a halo at
// most the nodes the partition does not own. The assumption it rests on (models/cpu/README.md): a
// partition's halo share (halo / owned) and cut share (cut / edges) are the same at both sizes, for a
// stand-in of the same mean degree, degree law and homophily cut into the same number of partitions.
// Throws std::invalid_argument when `measured` is empty or has no nodes or no edges, or a full size is
// below 1.
std::vector<PartitionHalo> scale_halo(const std::vector<PartitionHalo>& measured, std::int64_t full_nodes,
                                      std::int64_t full_edges);

}  // namespace tilesim::workloads::graphs
