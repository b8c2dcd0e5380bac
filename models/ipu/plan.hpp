#pragma once
// How an op is mapped onto tiles, and what that mapping is estimated to cost. Pure functions of the
// op's shape and the machine file; the planner picks the split with the fewest estimated cycles that
// fits in tile memory, like poplibs' embedding planner (which assumes uniformly spread indices).
//
// A split has three factors, over tiles numbered tile(i, s, h) = (i * S + s) * H + h:
//   S  row blocks:     the rows of the table (gather) or of the output (scatter_add) are cut into S blocks;
//   H  column blocks:  the feature columns are cut into H blocks (in grains of column_grain_bytes);
//   I  index groups:   the indices are cut into I groups, each handled by its own S x H tiles.
// Gather with S > 1 needs a second stage that picks, for each lookup, the candidate row from the block
// holding it; scatter_add with I > 1 needs a reduction of the I partial outputs.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/op_graph.hpp"
#include "models/ipu/machine_file.hpp"
#include "sim/machine_config.hpp"

namespace tilesim::ipu {

struct Split {
  std::int64_t row_blocks = 1;     // S
  std::int64_t column_blocks = 1;  // H
  std::int64_t index_groups = 1;   // I
};

struct PhaseEstimate {
  std::string name;
  sim::Cycles cycles = 0;
};

struct OpPlan {
  OpKind kind = OpKind::gather;
  Split split;                         // normalised: every block and group is non-empty
  std::int64_t rows = 0;               // rows being split: table rows (gather) or output rows (scatter_add)
  std::int64_t rows_per_block = 0;
  std::int64_t columns_per_block = 0;
  std::int64_t indices = 0;
  std::int64_t indices_per_group = 0;
  std::int64_t tiles_used = 0;
  sim::Cycles estimated_cycles = 0;    // the planner's estimate under uniform indices
  sim::Cycles objective_cycles = 0;    // what the planner ranks splits by (see PlannerSettings)
  std::vector<PhaseEstimate> phases;   // its parts, for the report
  std::int64_t estimated_peak_tile_bytes = 0;

  nlohmann::json to_json() const;
};

// Cost and memory of one split (normalised first). Throws std::logic_error for an impossible split.
OpPlan estimate_plan(const Op& op, const Split& split, const IpuMachine& machine);

// The splits the planner considers (powers of two and the largest factors that still fit the tiles).
std::vector<Split> candidate_splits(const Op& op, const IpuMachine& machine);

// The split with the lowest objective whose busiest tile fits memory_fraction of its SRAM, or failing that all of it.
// Throws tilesim::PlanError naming the op, the tile and the bytes needed when no split fits.
OpPlan plan_op(const Op& op, const IpuMachine& machine);

}  // namespace tilesim::ipu
