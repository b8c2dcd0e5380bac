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
// holding it; the scatter family with I > 1 needs a reduction of the I partial outputs.
//
// The dense ops are planned differently (planning/dense_plan.cpp):
//   matmul:         S row blocks of the input x H column blocks of the weight x K blocks of the inner
//                   dimension (k_blocks), tile (s, h, k) = (s * H + h) * K + k; with K > 1 the K partial
//                   products of each output block are summed by a reduction;
//   segment_matmul: one matmul plan per non-empty segment, each on its own range of tiles (a share of
//                   the machine proportional to its FLOPs), all running in the same supersteps;
//   unary, binary,
//   unary_grad:     the linear layout itself: every tile computes the elements it holds;
//   the training step's optimizer_step, sum_to, loss and loss_grad: planning/training_plan.hpp.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/op_graph.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "sim/machine_config.hpp"

namespace tilesim::ipu {

struct Split {
  std::int64_t row_blocks = 1;     // S
  std::int64_t column_blocks = 1;  // H
  std::int64_t index_groups = 1;   // I
  std::int64_t k_blocks = 1;       // matmul: blocks of the inner dimension
};

// One matmul of a segment_matmul plan: rows [row_begin, row_begin + rows) of the input times weight
// `segment`, on tiles [first_tile, first_tile + tiles).
struct MatmulPart {
  std::int64_t segment = 0;
  std::int64_t row_begin = 0, rows = 0;
  std::int64_t first_tile = 0, tiles = 0;
  Split split;
  std::int64_t rows_per_block = 0, columns_per_block = 0, k_per_block = 0;
};

// Where an exchange phase's data go, which the IPU-Link estimate of a system needs
// (system_estimate.hpp): nowhere (not an exchange), between the plan's tiles and a linearly mapped
// tensor, or among the plan's own tiles (candidate rows, partials).
enum class PhaseTraffic { none, linear_layout, among_plan_tiles };

struct PhaseEstimate {
  std::string name;
  sim::Cycles cycles = 0;
  PhaseTraffic traffic = PhaseTraffic::none;
  // A gather's or scatter's distribution to index groups: it broadcasts distinct bytes (the table, the
  // messages, the zeroed output), which cross a link group once whatever the copies.
  bool distribution = false;
};

struct OpPlan {
  OpKind kind = OpKind::gather;
  Split split;                         // normalised: every block and group is non-empty
  std::int64_t rows = 0;               // rows being split: table rows (gather) or output rows (scatter_add)
  std::int64_t rows_per_block = 0;     // (unary/binary: elements per tile of the linear layout)
  std::int64_t columns_per_block = 0;
  std::int64_t indices = 0;
  std::int64_t indices_per_group = 0;
  std::int64_t k_per_block = 0;        // matmul: inner-dimension elements per block
  std::vector<MatmulPart> parts;       // segment_matmul: one per non-empty segment
  std::int64_t tiles_used = 0;
  sim::Cycles estimated_cycles = 0;    // the planner's estimate under uniform indices
  sim::Cycles objective_cycles = 0;    // what the planner ranks splits by (see PlannerSettings)
  std::vector<PhaseEstimate> phases;   // its parts, for the report
  // False while the planner ranks candidate splits for one chip (plan_op): the cycles are summed but
  // the phases, which only the report reads there, are not listed. The chosen split is estimated again
  // with them.
  bool record_phases = true;
  std::int64_t estimated_peak_tile_bytes = 0;
  // What the plan needs on its busiest tile beyond its resident operands and outputs (receive buffers of
  // copied blocks and indices, a split's partial results): the term the available memory proportion
  // bounds (planning/temporary_budget.hpp). Counted by poplibs' own formulas (sliceTempBytes,
  // updateTempBytes), beside estimated_peak_tile_bytes's tally of the buffers tilesim's program allocates:
  // the two need not agree (poplibs' update formula counts an index split's partials twice), so a
  // scatter's temporaries can exceed its estimated peak.
  std::int64_t estimated_temporary_tile_bytes = 0;
  // How the plan was chosen: the proportion in force, its budget in bytes per tile, and whether the
  // chosen plan's temporaries fit it (false: no candidate's did; see temporary_budget.hpp). Zero and
  // true for a plan that was not chosen from candidates.
  double available_memory_proportion = 0;
  std::int64_t temporary_budget_bytes = 0;
  bool temporary_budget_met = true;
  // Indices compiled into the exchange (static_index_plan.hpp) instead of read at run time; the
  // split fields are then unused and the cycles come from the engine run alone.
  bool static_indices = false;

  nlohmann::json to_json() const;
};

// The value type an op's tensors hold on the simulated tiles is its dtype (a cast's input: its
// input_dtype), which must be one the machine models (models_value_dtype). Throws InputError naming the
// op, the backend (`backend`, e.g. "ipu:bow") and what runs it otherwise.
void require_modelled_op_dtype(const Op& op, const IpuMachine& machine, const std::string& backend);
// `machine` set up for op's values (with_value_dtype); throws as require_modelled_op_dtype.
IpuMachine machine_for_op_dtype(const IpuMachine& machine, const Op& op);
// Throws std::logic_error unless `machine` is set up for op's values: the program builders' precondition
// (the planners' entry points set the machine up themselves).
void require_value_dtype(const Op& op, const IpuMachine& machine);

// Cost and memory of one split (normalised first). Throws std::logic_error for an impossible split.
OpPlan estimate_plan(const Op& op, const Split& split, const IpuMachine& machine, bool record_phases = true);

// The splits the planner considers (powers of two and the largest factors that still fit the tiles).
std::vector<Split> candidate_splits(const Op& op, const IpuMachine& machine);

// The split with the lowest objective whose temporaries fit the op's available memory proportion of a
// tile's SRAM (planning/temporary_budget.hpp) and whose busiest tile fits the SRAM; when no split's
// temporaries fit, the one with the lowest objective that fits the SRAM (poplibs' fallback).
// Throws tilesim::PlanError naming the op, the tile, the bytes needed and the bytes there are, and the next
// step to try, when no split fits. A segment_matmul is planned here for equal segments.
OpPlan plan_op(const Op& op, const IpuMachine& machine);
// The same, for the op's actual index tensor: a segment_matmul's plan follows its offsets (a compiled
// program knows its segment sizes, as it knows its indices' count); other kinds ignore `indices`.
OpPlan plan_op(const Op& op, const std::vector<std::int32_t>& indices, const IpuMachine& machine);

// Which operands of a matmul are stored transposed (a training step's backward: x^T @ g reads its input
// stored [inner, rows], g @ W^T its weight stored [cols, inner]). The operands move as the stored
// rectangles of their blocks, the same bytes as untransposed; each tile then transposes its block
// (poplin's Transpose2d, the re-layout poplibs does before a weight-update or input-gradient
// convolution) before the AMP vertex reads it: the transposes' cycles and one more block of SRAM.
struct MatmulTranspose {
  bool input = false;
  bool weight = false;
};

// Dense ops (dense_plan.cpp). A matmul of rows x inner @ inner x cols (+ bias) on `tiles` tiles, for a
// given split (normalised) or the best split; plan_matmul returns false when no split fits the SRAM,
// leaving in `smallest` the plan needing the least memory.
OpPlan estimate_matmul(std::int64_t rows, std::int64_t inner, std::int64_t cols, bool bias, const Split& split,
                       std::int64_t tiles, const IpuMachine& machine, MatmulTranspose transpose = {});
// `proportion`: the available memory proportion in force (available_memory_proportion(op, machine)).
bool plan_matmul(std::int64_t rows, std::int64_t inner, std::int64_t cols, bool bias, std::int64_t tiles,
                 const IpuMachine& machine, double proportion, OpPlan& best, OpPlan& smallest, MatmulTranspose transpose = {});
OpPlan plan_dense_op(const Op& op, const std::vector<std::int32_t>& offsets, const IpuMachine& machine);

// The PlanError for an op no plan fits: names the op, the tile, the bytes it needs and has, and the next step.
[[noreturn]] void throw_does_not_fit(const Op& op, const IpuMachine& machine, const std::string& plan_text,
                                     std::int64_t needed_bytes);

}  // namespace tilesim::ipu
