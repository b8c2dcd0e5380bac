// The engine's pure cost rules (sim/tile_cost.hpp): a tile's cycles for its vertices in one compute set
// (by barrel scheduling), and for its bytes in one exchange.
#include "sim/tile_cost.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tilesim::sim {

namespace {

void check_not_negative(Cycles cycles, const Vertex& vertex, const char* what) {
  if (cycles < 0) {
    throw std::logic_error("vertex " + vertex.codelet + " has negative " + what + " (" + std::to_string(cycles) + ")");
  }
}

}  // namespace

Cycles tile_compute_cycles(const std::vector<const Vertex*>& vertices, std::int32_t worker_contexts) {
  if (worker_contexts < 1) {
    throw std::logic_error("tile_compute_cycles: worker_contexts must be at least 1, is " +
                           std::to_string(worker_contexts));
  }
  Cycles multi_worker_cycles = 0;
  Cycles single_supervisor_cycles = 0;
  // Reused between calls: load() calls this once per tile per compute set.
  thread_local std::vector<Cycles> single_worker_cycles;
  single_worker_cycles.clear();

  for (const Vertex* vertex : vertices) {
    check_not_negative(vertex->supervisor_cycles, *vertex, "supervisor cycles");
    for (Cycles c : vertex->worker_cycles) check_not_negative(c, *vertex, "worker cycles");
    const auto workers = vertex->worker_cycles.size();
    if (workers == 1) {
      single_worker_cycles.push_back(vertex->worker_cycles[0]);
      single_supervisor_cycles += vertex->supervisor_cycles;
    } else if (workers == static_cast<std::size_t>(worker_contexts)) {
      const Cycles slowest = *std::max_element(vertex->worker_cycles.begin(), vertex->worker_cycles.end());
      multi_worker_cycles += barrel_tile_cycles(slowest, worker_contexts, vertex->supervisor_cycles);
    } else {
      throw std::logic_error("vertex " + vertex->codelet + " has " + std::to_string(workers) +
                             " worker cycle entries; expected 1 (single-worker) or " + std::to_string(worker_contexts) +
                             " (one per worker context)");
    }
  }
  if (single_worker_cycles.empty()) return multi_worker_cycles;

  // Longest first onto the least-loaded context (LPT): what a supervisor handing vertices to free
  // workers approaches, and deterministic.
  std::sort(single_worker_cycles.begin(), single_worker_cycles.end(), std::greater<Cycles>());
  thread_local std::vector<Cycles> context_load;
  context_load.assign(static_cast<std::size_t>(worker_contexts), 0);
  for (Cycles c : single_worker_cycles) {
    *std::min_element(context_load.begin(), context_load.end()) += c;
  }
  const Cycles busiest = *std::max_element(context_load.begin(), context_load.end());
  return multi_worker_cycles + barrel_tile_cycles(busiest, worker_contexts, single_supervisor_cycles);
}

Cycles barrel_tile_cycles(Cycles busiest_context_cycles, std::int32_t worker_contexts, Cycles supervisor_cycles) {
  return static_cast<Cycles>(worker_contexts) * busiest_context_cycles + supervisor_cycles;
}

Cycles tile_exchange_cycles(std::int64_t bytes_sent, double effective_bytes_received, double exchange_bytes_per_cycle) {
  if (!(exchange_bytes_per_cycle > 0) || !std::isfinite(exchange_bytes_per_cycle)) {
    throw std::logic_error("tile_exchange_cycles: exchange_bytes_per_cycle must be positive, is " +
                           std::to_string(exchange_bytes_per_cycle));
  }
  if (bytes_sent < 0 || !(effective_bytes_received >= 0)) {
    throw std::logic_error("tile_exchange_cycles: negative bytes (sent " + std::to_string(bytes_sent) + ", received " +
                           std::to_string(effective_bytes_received) + ")");
  }
  // Sending and receiving use separate paths, so the busier direction sets the time.
  const double bytes = std::max(static_cast<double>(bytes_sent), effective_bytes_received);
  return static_cast<Cycles>(std::ceil(bytes / exchange_bytes_per_cycle));
}

}  // namespace tilesim::sim
