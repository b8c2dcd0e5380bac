#pragma once
// A pipelined step as an engine program: one superstep per pipeline cycle of a lockstep schedule. In its
// compute phase each busy stage runs its forward and/or backward (a vertex of the stage's simulated cycles
// on its IPU's first tile); in its exchange each stage that ran a forward sends that micro-batch's
// activations to the next stage, and each that ran a backward sends the gradient back, spread over the
// tiles of both IPUs (linear layout), over the links between them.
#include <cstdint>
#include <vector>

#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/system/pipeline_schedule.hpp"
#include "sim/program.hpp"

namespace tilesim::ipu {

// Stage s runs on IPU first_ipu + s; forward_cycles[s] / backward_cycles[s]: one micro-batch's stage
// compute in tile cycles; boundary_bytes[s]: the activations stage s passes to stage s + 1 (and the
// gradient bytes that come back).
sim::Program pipeline_program(const IpuMachine& system, std::int32_t first_ipu, const std::vector<sim::Cycles>& forward_cycles,
                              const std::vector<sim::Cycles>& backward_cycles, const std::vector<std::int64_t>& boundary_bytes,
                              const LockstepSchedule& schedule);

}  // namespace tilesim::ipu
