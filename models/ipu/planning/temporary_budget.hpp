#pragma once
// The available memory proportion (PopTorch's setAvailableMemoryProportion, poplibs' option
// "availableMemoryProportion"): the share of a tile's SRAM that an op's TEMPORARY memory may use while the
// planner looks for its fastest plan. Temporaries are what a plan needs beyond the operands and outputs that
// stay resident on the tiles: copies of table or message blocks and of indices received for the split, the
// first stage's candidate rows, the partial results of an index split (OpPlan::estimated_temporary_tile_bytes).
//
// Choice, as poplibs' embedding planner makes it (lib/popops/DynamicSlice.cpp, planInternal and
// applyConstraints): the plan with the lowest objective among those whose temporaries fit
// proportion x SRAM bytes per tile; when none does, the planner tries again with unlimited temporary
// memory, i.e. the plan with the lowest objective, and says so (poplibs logs a warning). Separately,
// every plan's whole peak (resident and temporary bytes) must fit the tile's SRAM.
#include <cstdint>
#include <vector>

#include "ir/op_graph.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/planning/plan.hpp"

namespace tilesim::ipu {

// The proportion in force for `op`: its own (Op::available_memory_proportion, set by the workload's op
// field or the run-wide --available-memory-proportion), else the machine file's planner.memory_fraction.
double available_memory_proportion(const Op& op, const IpuMachine& machine);

// proportion x SRAM bytes per tile, rounded down.
std::int64_t temporary_budget_bytes(double proportion, const IpuMachine& machine);

// The plan with the lowest objective (ties: fewer tiles) whose temporaries fit `proportion`'s budget
// and whose peak fits the SRAM; failing that, the lowest objective whose peak fits the SRAM (its
// temporary_budget_met false). Records the proportion, budget and outcome on the plan returned.
// nullptr when no plan fits the SRAM.
const OpPlan* choose_within_budget(const std::vector<OpPlan>& plans, double proportion, const IpuMachine& machine,
                                   OpPlan& chosen);

// Records the proportion and budget on a plan that had no alternatives (elementwise, static indices).
void record_budget(OpPlan& plan, double proportion, const IpuMachine& machine);

}  // namespace tilesim::ipu
