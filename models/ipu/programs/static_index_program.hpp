#pragma once
// Static index mode of the simulated IPU: a model's graph edges are known when its program is
// compiled, so a gather or scatter over them can be a compiled exchange built from the edges
// themselves instead of poplibs' dynamic MultiSlice / MultiUpdate plans (which read every index at
// run time and are planned for uniform indices, planning/plan.hpp). The backend ipu:MACHINE:static uses it for
// the ops whose index tensor is known at compile time (TensorInfo::known_at_compile_time); every other
// op, and every op under ipu:MACHINE, stays dynamic. Poplar can compile such exchanges; PopTorch's
// index_select and torch_scatter do not, which is why it is a mode and not the default.
//
// Memory: both operands and the output stay in the linear layout (no copy of the table per index
// group, no candidate rows), which is what lets a large graph fit a multi-IPU system. The compiled
// exchange code itself is not charged to tile memory (a few bytes per received region).
//
// The builders: static_gather_program.cpp and static_scatter_program.cpp (what they share:
// linear_runs.hpp); the plan reports show: planning/static_index_plan.hpp.
#include <cstdint>
#include <vector>

#include "ir/op_graph.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/planning/static_index_plan.hpp"
#include "models/ipu/programs/op_program.hpp"

namespace tilesim::ipu {

// The programs. Throw tilesim::PlanError (exit 3) when the indices need more SRAM than a tile has.
OpProgram build_static_gather_program(const Op& op, const std::vector<std::int32_t>& indices, const IpuMachine& machine);
// scatter_add, scatter_mean, scatter_max. The partials are folded in the messages themselves, which are
// dead once scattered, unless `keep_messages` (a later op reads them): then in a copy, paid for in
// cycles and SRAM.
OpProgram build_static_scatter_program(const Op& op, const std::vector<std::int32_t>& indices, const IpuMachine& machine,
                                       bool keep_messages = false);

}  // namespace tilesim::ipu
