#pragma once
// The planner's cost of one phase of a plan, from the rules the engine times a program by
// (sim/engine.hpp), so that the planner does not restate them: a compute phase lasts the machine's
// compute-set launch plus its busiest tile's vertices, a multi-worker vertex lasting worker_contexts x
// its slowest worker plus its supervisor cycles (sim::barrel_tile_cycles); an exchange phase lasts the
// machine's fixed exchange cost plus the busiest tile's busier direction at the exchange rate
// (sim::tile_exchange_cycles). Pure functions of the work and the machine file.
#include <cstdint>

#include "common/integer_math.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "sim/machine_config.hpp"

namespace tilesim::ipu {

// One multi-worker vertex whose slowest worker takes `slowest_worker_cycles`, launched by the
// supervisor as the machine's codelets are (codelets.supervisor_cycles).
sim::Cycles vertex_estimate(sim::Cycles slowest_worker_cycles, const IpuMachine& machine);

// One multi-worker vertex whose workers share `items` evenly: the busiest takes ceil(items / workers)
// of them and costs worker(n) worker cycles for n items.
template <class WorkerCycles>
sim::Cycles spread_vertex_estimate(std::int64_t items, const IpuMachine& machine, WorkerCycles worker) {
  return vertex_estimate(worker(ceil_div(items, machine.chip.worker_contexts)), machine);
}

// A compute phase whose busiest tile's vertices take `tile_cycles`.
sim::Cycles compute_phase_estimate(sim::Cycles tile_cycles, const IpuMachine& machine);

// A compute phase whose busiest tile runs one multi-worker vertex with that slowest worker.
sim::Cycles vertex_phase_estimate(sim::Cycles slowest_worker_cycles, const IpuMachine& machine);

// The transfer part of an exchange phase whose busiest tile sends `sent_bytes` and receives
// `received_bytes`, without the phase's fixed cost (what poplibs ranks plans by).
sim::Cycles exchange_transfer_estimate(std::int64_t sent_bytes, std::int64_t received_bytes, const IpuMachine& machine);

// The whole exchange phase: its fixed cost plus the transfer; 0 when no byte moves (no phase).
sim::Cycles exchange_phase_estimate(std::int64_t sent_bytes, std::int64_t received_bytes, const IpuMachine& machine);

}  // namespace tilesim::ipu
