#include "workloads/graphs/halo.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "workloads/graphs/algorithms.hpp"

namespace tilesim::workloads::graphs {

std::vector<PartitionHalo> halo_statistics(const EdgeList& graph, const std::vector<std::int32_t>& part_of_node,
                                           std::int32_t partitions) {
  if (partitions < 1) throw std::invalid_argument("halo_statistics: partitions must be at least 1, got " + std::to_string(partitions));
  if (static_cast<std::int64_t>(part_of_node.size()) != graph.num_nodes)
    throw std::invalid_argument("halo_statistics: " + std::to_string(part_of_node.size()) + " part labels for " +
                                std::to_string(graph.num_nodes) + " nodes");
  std::vector<PartitionHalo> parts(static_cast<std::size_t>(partitions));
  for (const std::int32_t p : part_of_node) {
    if (p < 0 || p >= partitions)
      throw std::invalid_argument("halo_statistics: part " + std::to_string(p) + " outside [0, " + std::to_string(partitions) + ")");
    ++parts[static_cast<std::size_t>(p)].owned_nodes;
  }
  // The remote sources each partition reads, repeats included; sorted and made unique below. Memory is
  // one int32 per cut edge, whatever the node count or the number of partitions.
  std::vector<std::vector<std::int32_t>> remote(static_cast<std::size_t>(partitions));
  for (std::size_t e = 0; e < graph.src.size(); ++e) {
    const std::int32_t owner = part_of_node[static_cast<std::size_t>(graph.dst[e])];
    const std::int32_t source_part = part_of_node[static_cast<std::size_t>(graph.src[e])];
    PartitionHalo& part = parts[static_cast<std::size_t>(owner)];
    if (source_part == owner) {
      ++part.local_edges;
    } else {
      ++part.cut_edges;
      remote[static_cast<std::size_t>(owner)].push_back(graph.src[e]);
    }
  }
  for (std::size_t p = 0; p < parts.size(); ++p) {
    auto& sources = remote[p];
    std::sort(sources.begin(), sources.end());
    parts[p].halo_nodes = std::unique(sources.begin(), sources.end()) - sources.begin();
  }
  return parts;
}

std::vector<PartitionHalo> metis_halo(const EdgeList& graph, std::int32_t partitions, std::uint64_t seed) {
  if (partitions < 1 || partitions > graph.num_nodes)
    throw std::invalid_argument("metis_halo: partitions must be in [1, " + std::to_string(graph.num_nodes) +
                                "] (the node count), got " + std::to_string(partitions));
  return halo_statistics(graph, metis_partition(graph, partitions, seed), partitions);
}

std::vector<PartitionHalo> scale_halo(const std::vector<PartitionHalo>& measured, std::int64_t full_nodes,
                                      std::int64_t full_edges) {
  std::int64_t nodes = 0, edges = 0;
  for (const PartitionHalo& p : measured) {
    nodes += p.owned_nodes;
    edges += p.local_edges + p.cut_edges;
  }
  if (measured.empty() || nodes < 1 || edges < 1)
    throw std::invalid_argument("scale_halo: the measured partitions hold no nodes or no edges");
  if (full_nodes < 1 || full_edges < 1)
    throw std::invalid_argument("scale_halo: the full graph needs at least one node and one edge");
  const double node_factor = static_cast<double>(full_nodes) / static_cast<double>(nodes);
  const double edge_factor = static_cast<double>(full_edges) / static_cast<double>(edges);
  const auto times = [](std::int64_t count, double factor) {
    return static_cast<std::int64_t>(std::llround(static_cast<double>(count) * factor));
  };
  std::vector<PartitionHalo> full;
  full.reserve(measured.size());
  for (const PartitionHalo& p : measured) {
    PartitionHalo f;
    f.owned_nodes = times(p.owned_nodes, node_factor);
    f.halo_nodes = std::min(times(p.halo_nodes, node_factor), std::max<std::int64_t>(0, full_nodes - f.owned_nodes));
    f.local_edges = times(p.local_edges, edge_factor);
    f.cut_edges = times(p.cut_edges, edge_factor);
    full.push_back(f);
  }
  return full;
}

}  // namespace tilesim::workloads::graphs
