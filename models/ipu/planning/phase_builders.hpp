#pragma once
// The small steps the dense, reduction and training planners share when they append phases to a
// plan: a buffer's aligned size, a compute or exchange phase charged to both the estimate and the
// objective, and the on-device repeat loop's control step. (The gather/scatter planner in plan.cpp
// charges the objective separately and keeps its own versions.)
#include <cstdint>
#include <string>

#include "models/ipu/planning/plan.hpp"
#include "sim/program.hpp"

namespace tilesim::ipu {

inline std::int64_t aligned(std::int64_t bytes) { return sim::align_buffer_offset(bytes); }

// Appends a phase of `cycles` (none when zero), charged to the estimate and the objective alike.
inline void append_phase(OpPlan& p, const std::string& name, sim::Cycles cycles, PhaseTraffic traffic = PhaseTraffic::none) {
  if (cycles == 0) return;
  p.phases.push_back({name, cycles, traffic});
  p.estimated_cycles += cycles;
  p.objective_cycles += cycles;
}

// The repeat loop's control step and the sync after it (nothing when the machine charges none).
inline void append_loop_control(OpPlan& p, const IpuMachine& m) {
  if (m.planner.repeat_loop_control_cycles == 0) return;
  append_phase(p, "compute: repeat loop control", m.planner.repeat_loop_control_cycles);
  append_phase(p, "sync", m.chip.sync_cycles);
}

}  // namespace tilesim::ipu
