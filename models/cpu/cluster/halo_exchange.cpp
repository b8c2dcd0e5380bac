#include "models/cpu/cluster/halo_exchange.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace tilesim::cpu_model {

double halo_exchange_s(const std::vector<std::int64_t>& halo_nodes_per_partition, std::int64_t row_bytes,
                       const Fabric& fabric) {
  if (halo_nodes_per_partition.empty()) throw std::invalid_argument("halo_exchange_s: no partitions");
  if (row_bytes < 0) throw std::invalid_argument("halo_exchange_s: row_bytes " + std::to_string(row_bytes) + " < 0");
  if (!(fabric.bytes_per_s_per_node > 0) || !(fabric.latency_s >= 0))
    throw std::invalid_argument("halo_exchange_s: the fabric needs a positive bandwidth and a latency >= 0");
  std::int64_t largest = 0;
  for (const std::int64_t halo : halo_nodes_per_partition) {
    if (halo < 0) throw std::invalid_argument("halo_exchange_s: a negative halo (" + std::to_string(halo) + " nodes)");
    largest = std::max(largest, halo);
  }
  // One partition alone, or none reading a remote row: no exchange at all, not even a latency.
  if (largest == 0) return 0.0;
  return static_cast<double>(largest) * static_cast<double>(row_bytes) / fabric.bytes_per_s_per_node + fabric.latency_s;
}

}  // namespace tilesim::cpu_model
