#pragma once
// Sums across tiles, as popops::reduce does them: each tile first sums what it holds into partial sums
// of the outputs its elements feed (a contiguous range of them), then the partials travel to the tiles
// that own the outputs (the output's linear layout), which add them up. When many tiles feed one owner,
// the planner may first sum groups of them on each group's first tile (a second stage), so that no tile
// receives every partial: the choice is the cheaper of the two by the same cost rules the engine times
// the program by. The schedule is a pure function of where the partials are; the programs build their
// exchanges and vertices from it (programs/reduction_program.hpp) and the planner costs it here.
#include <cstdint>
#include <vector>

#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/planning/blocks.hpp"
#include "models/ipu/planning/linear_layout.hpp"
#include "models/ipu/planning/plan.hpp"

namespace tilesim::ipu {

// A tile's partial sums of the outputs `outputs` (a contiguous range of the reduced tensor's elements).
struct PartialSlice {
  std::int64_t tile = 0;
  Range outputs;
};

// Stage 1: the members' slices summed on the first member's tile, into a sum covering `outputs`.
struct ReductionGroup {
  std::vector<PartialSlice> members;
  Range outputs;
  std::int64_t tile() const { return members.front().tile; }
};

// One owner tile of the output's linear layout: its outputs, the slices it sums as they are and the
// group sums (stage 1) it sums with them. Every slice here is cut to the owner's outputs.
struct OwnerReduction {
  std::int64_t tile = 0;
  Range outputs;
  std::vector<PartialSlice> direct;
  std::vector<ReductionGroup> groups;
  std::int64_t terms() const { return static_cast<std::int64_t>(direct.size() + groups.size()); }
};

struct ReductionSchedule {
  std::vector<OwnerReduction> owners;
  std::int64_t fan_in = 0;  // contributors per stage-1 group; an owner with no more contributors takes them directly
  bool two_stages() const;
};

// The schedule for partials (each tile's slice, tiles ascending) reduced into the linear layout `out`,
// with groups of `fan_in` contributors for owners that have more than that.
ReductionSchedule schedule_reduction(const std::vector<PartialSlice>& partials, const LinearLayout& out, std::int64_t fan_in);

// What a reduction costs after the partials' compute phase, tile by tile as the engine times it: the
// stages' exchanges, the stage-1 sums and the owners' sums (each a multi-worker vertex sharing its
// outputs; `scale_outputs`: the owners also multiply by a constant, a mean's 1/n). Appends its phases to
// `plan` (a sync before each exchange; none after the last compute) and returns the busiest tile's
// bytes for the reduction's buffers (received slices, group sums, outputs).
std::int64_t add_reduction_estimate(OpPlan& plan, const ReductionSchedule& schedule, bool scale_outputs, const IpuMachine& m);

// The schedule with the fewest estimated cycles: every contributor straight to its owner, or groups of
// each power of two below the largest owner's contributor count.
ReductionSchedule plan_reduction(const std::vector<PartialSlice>& partials, const LinearLayout& out, bool scale_outputs,
                                 const IpuMachine& m);

}  // namespace tilesim::ipu
