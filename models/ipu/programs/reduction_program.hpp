#pragma once
// The programs' side of a reduction across tiles (planning/reduction_plan.hpp): the transfers that carry
// partial sums to their group's first tile and to the output's owners, and the Reduce vertices that add
// them up, built from the same schedule the planner costs.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/planning/reduction_plan.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "sim/program.hpp"

namespace tilesim::ipu {

// Where a tile's partial sums live: their buffer, whose first element is output `first_output`. Partial
// sums are float32 whatever the op's value type (kPartialDType, as popops reductions accumulate half
// data in float), so the output, of the machine's value type, is rounded once.
struct PartialBuffer {
  sim::BufferId buffer = -1;
  std::int64_t first_output = 0;
};

// Appends `partial_step` (whose compute writes the partials, by tile in `partials`) and the supersteps
// after it to `out.program`: stage 1 when the schedule has groups, then the owners' sums, each output
// the sum of its terms divided by `divisor` (1 for a plain sum, n for a mean), summed in double and
// rounded once into `result_dtype` (the op's value type, or float32 for sums a later step reads).
// Returns the output's pieces (flat, in the output's linear layout).
std::vector<TensorPiece> build_reduction(OpProgram& out, sim::Superstep partial_step,
                                         const std::map<std::int64_t, PartialBuffer>& partials,
                                         const ReductionSchedule& schedule, double divisor, const IpuMachine& machine,
                                         DType result_dtype);

}  // namespace tilesim::ipu
