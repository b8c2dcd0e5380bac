#pragma once
// The engine's pure cost rules (sim/tile_cost.cpp): a tile's cycles for its vertices in one compute set
// and for its bytes in one exchange. Apart from the engine, so that planners and tests can call them.
#include <cstdint>
#include <vector>

#include "sim/machine_config.hpp"
#include "sim/program.hpp"

namespace tilesim::sim {

// Tile cycles of the vertices one tile runs in one compute set: multi-worker vertices run one after
// another, each costing worker_contexts x (slowest worker) + supervisor cycles; single-worker vertices
// are packed onto the worker contexts (longest first) and cost worker_contexts x (busiest context)
// plus their supervisor cycles. Pure, so tests and planners can call it.
Cycles tile_compute_cycles(const std::vector<const Vertex*>& vertices, std::int32_t worker_contexts);

// The barrel-scheduling rule tile_compute_cycles applies: each of the worker_contexts contexts issues
// every worker_contexts-th cycle, so work whose busiest context needs `busiest_context_cycles` lasts
// worker_contexts x that on the tile, plus the supervisor's cycles. A model's planner estimates a
// vertex with it (the slowest worker as the busiest context).
Cycles barrel_tile_cycles(Cycles busiest_context_cycles, std::int32_t worker_contexts, Cycles supervisor_cycles);

// Exchange cycles of one tile: max(bytes sent, bytes received) / exchange_bytes_per_cycle, rounded up.
// The engine passes as `effective_bytes_received` each transfer's bytes divided by the number of the
// tile's supertile that receive it (tiles sharing a bus receive common data at that multiple of the rate).
Cycles tile_exchange_cycles(std::int64_t bytes_sent, double effective_bytes_received, double exchange_bytes_per_cycle);

}  // namespace tilesim::sim
