#pragma once
// One GNN layer's halo exchange on a CPU cluster, as DistGNN's baseline ("0c": no delayed or
// overlapped communication) does it: before the layer aggregates, every node receives the feature rows
// of its halo (remote nodes its local edges read) from their owners.
//
// The model, and its assumptions:
//   time = max over partitions p of (halo_nodes[p] x row_bytes / fabric.bytes_per_s_per_node)
//          + fabric.latency_s            (0 when no partition has a halo)
// - all-to-all at full injection bandwidth: every node receives at once, the fabric is non-blocking
//   (a fat tree), so a node's time is set by its own bytes and the slowest node ends the exchange;
// - one message latency per exchange (the sends of a node overlap), not per peer;
// - no overlap with compute: the exchange sits between the layers' compute on the critical path;
// - a halo row is sent once per layer to each partition that reads it (no caching across layers).
//
// This header is in models/cpu, which may not include workloads/ (docs/architecture.md), so the pure
// function takes the halo sizes; the template below accepts the per-partition statistics of
// workloads/graphs/halo.hpp (anything with a `halo_nodes` member) so that callers can pass those as is.
#include <cstdint>
#include <vector>

#include "models/cpu/cluster/cpu_cluster.hpp"

namespace tilesim::cpu_model {

// halo_nodes_per_partition[p]: the distinct remote nodes partition p reads. Throws std::invalid_argument
// on an empty list, a negative count or row_bytes < 0 (a caller's bug, not user input).
double halo_exchange_s(const std::vector<std::int64_t>& halo_nodes_per_partition, std::int64_t row_bytes,
                       const Fabric& fabric);

// The same, from per-partition statistics (workloads::graphs::PartitionHalo).
template <class Partition>
double halo_exchange_s(const std::vector<Partition>& parts, std::int64_t row_bytes, const Fabric& fabric) {
  std::vector<std::int64_t> halo_nodes;
  halo_nodes.reserve(parts.size());
  for (const Partition& p : parts) halo_nodes.push_back(p.halo_nodes);
  return halo_exchange_s(halo_nodes, row_bytes, fabric);
}

}  // namespace tilesim::cpu_model
