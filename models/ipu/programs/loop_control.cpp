#include "models/ipu/programs/op_program.hpp"

namespace tilesim::ipu {

void append_loop_control(sim::Program& program, const IpuMachine& machine) {
  if (machine.planner.repeat_loop_control_cycles == 0) return;
  sim::Vertex control;
  control.codelet = "RepeatLoopControl";
  // The supervisor alone evaluates the loop condition; no worker runs.
  control.worker_cycles.assign(static_cast<std::size_t>(machine.chip.worker_contexts), 0);
  control.supervisor_cycles = machine.planner.repeat_loop_control_cycles;
  sim::Superstep step{"loop control", {"RepeatLoopControl", {}}, {"none", {}}};
  step.compute.vertices.push_back({0, std::move(control)});
  program.steps.push_back(std::move(step));
}

}  // namespace tilesim::ipu
