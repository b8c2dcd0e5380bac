#include "models/ipu/planning/phase_estimate.hpp"

#include "sim/engine.hpp"

namespace tilesim::ipu {

sim::Cycles vertex_estimate(sim::Cycles slowest_worker_cycles, const IpuMachine& machine) {
  return sim::barrel_tile_cycles(slowest_worker_cycles, machine.chip.worker_contexts, machine.codelets.supervisor_cycles);
}

sim::Cycles compute_phase_estimate(sim::Cycles tile_cycles, const IpuMachine& machine) {
  return machine.chip.compute_fixed_cycles + tile_cycles;
}

sim::Cycles vertex_phase_estimate(sim::Cycles slowest_worker_cycles, const IpuMachine& machine) {
  return compute_phase_estimate(vertex_estimate(slowest_worker_cycles, machine), machine);
}

sim::Cycles exchange_transfer_estimate(std::int64_t sent_bytes, std::int64_t received_bytes, const IpuMachine& machine) {
  return sim::tile_exchange_cycles(sent_bytes, static_cast<double>(received_bytes), machine.chip.exchange_bytes_per_cycle);
}

sim::Cycles exchange_phase_estimate(std::int64_t sent_bytes, std::int64_t received_bytes, const IpuMachine& machine) {
  if (sent_bytes == 0 && received_bytes == 0) return 0;
  return machine.chip.exchange_fixed_cycles + exchange_transfer_estimate(sent_bytes, received_bytes, machine);
}

}  // namespace tilesim::ipu
