#pragma once
// A mini-batch as the host-side loaders hand it to a training step: a graph over local node ids, and
// how those ids map back to the full graph (node batches) or to the dataset (batches of small graphs).
// Pure data; the loaders that make them are beside this file (neighbor_sampler, cluster_loader,
// graph_dataset, fixed_size).
#include <cstdint>
#include <vector>

#include "workloads/graphs/graph.hpp"

namespace tilesim::workloads::loaders {

struct Batch {
  graphs::EdgeList graph;                  // local node ids 0..n-1; graph batches set graph_of_node / num_graphs
  std::vector<std::int32_t> global_nodes;  // local id -> node id in the full graph (neighbor, cluster); empty for graph batches
  std::int64_t num_seed_nodes = 0;         // neighbor: the seeds are local nodes 0..num_seed_nodes-1; else 0
  std::vector<std::int32_t> graph_ids;     // graph batches: the dataset graph of each local graph, in order
};

}  // namespace tilesim::workloads::loaders
