#pragma once
// The planner's view of an IPU system (several IPUs joined by IPU-Links): what a plan pays on the links,
// because its tiles span several IPUs or because the tensors it reads or writes in the linear layout
// do, so that splits are not ranked blind to them.
#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/planning/plan.hpp"

namespace tilesim::ipu {

// Adds to `plan` (estimate and objective alike) the cost of its exchange phases' traffic across
// IPU-Links. Each exchange phase moves (busiest tile's bytes x tiles used) between the plan's IPUs and
// where the other end lives: the plan's own IPUs for phases among its tiles (candidate rows, partials),
// else the IPUs a linearly mapped tensor of those bytes spreads over (the layout contract of
// programs/op_program.hpp puts op outputs there, over every IPU of a system). Under uniform indices every pair
// of those IPUs carries an equal share over its route (a gather's or scatter's distribution phase at most
// the distinct bytes it broadcasts, as a broadcast crosses a link group once); a phase whose busiest link group takes longer
// than its on-chip exchange gains the difference (the engine takes the later of the two) and a global
// sync. No-op on a single IPU. Which
// phases are exchanges, and where their data go, each phase says itself (PhaseEstimate::traffic).
void add_cross_chip_estimate(OpPlan& plan, const IpuMachine& machine);

}  // namespace tilesim::ipu
