#pragma once
// Plans of the op kinds a training step adds beyond the elementwise unary_grad (dense_plan.cpp) and the
// transposed matmuls (MatmulTranspose): the optimizer update, sum_to, the loss and its gradient. Each is
// built from the layout its operands arrive in (the linear layout, or where PopTorch keeps a tensor) and
// costed phase by phase as its program runs (programs/op_program.hpp):
//   optimizer_step: elementwise over the parameter's P elements in its linear layout, the optimizer
//                   state kept beside the parameter (PopTorch keeps each state tensor mapped like its
//                   parameter), Adam's step number broadcast from tile 0 first;
//   sum_to:         each tile sums its elements into partial sums of the outputs they feed, then a
//                   reduction across tiles (reduction_plan.hpp) into the output's linear layout;
//   loss:           cross entropy: the logits' rows gathered whole onto row blocks (a row's softmax on
//                   the tile holding it), each tile's summed row losses, then a reduction to tile 0 that
//                   takes the mean; mse: each tile's sum of squares where the operands lie, then the same;
//   loss_grad:      cross entropy: the same row blocks, each row's softmax minus its one-hot label over M,
//                   back to the linear layout; mse: elementwise 2 (x - t) / n in the linear layout.
// Row weights (Op::aux: a padded batch's 0/1 mask) live beside the rows they scale, written there as the
// labels are: on cross entropy's row blocks, and for mse on each linear tile for the rows its elements
// touch. The loss's partials become two, sum w l and sum w, reduced to tile 0, where a last step divides
// them; the gradient first reduces the tiles' weight sums to tile 0 and broadcasts the total back (with
// the logits' exchange, for cross entropy), then scales row r by w_r / sum w.
#include <cstdint>
#include <vector>

#include "ir/op_graph.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/planning/linear_layout.hpp"
#include "models/ipu/planning/plan.hpp"
#include "models/ipu/planning/reduction_plan.hpp"

namespace tilesim::ipu {

// sum_to: the outputs each tile of the input's linear layout `in` feeds. Row sums (other_rows = M) feed
// the contiguous outputs of the rows and groups a tile's elements belong to; column sums (other_rows = 1)
// the groups of the columns it holds, or every group when its elements wrap past a row's end.
std::vector<PartialSlice> sum_to_partials(const Op& op, const LinearLayout& in);

// The worker cycles of summing `elements` into `outputs` partial sums, for the busiest worker's share
// of `outputs_per_worker` outputs (each the sum of about elements / outputs of them: a Reduce vertex).
sim::Cycles partial_sum_worker_cycles(std::int64_t outputs_per_worker, std::int64_t outputs, std::int64_t elements,
                                      const CodeletCosts& c);

// Cross entropy's row blocks: whole rows of the [M, C] logits on consecutive tiles from tile 0.
struct RowBlocks {
  std::int64_t rows = 0, rows_per_tile = 0, tiles = 0;
  Range tile_rows(std::int64_t tile) const { return block(rows, rows_per_tile, tile); }
};
RowBlocks loss_row_blocks(std::int64_t rows, const IpuMachine& machine);

// The partials of a loss: one per tile holding logits (row blocks, or the linear layout for mse), each
// the sum of that tile's losses, reduced into the one output on tile 0. With row weights: the forward's
// two sums per tile (sum w l, sum w), and the gradient's one (sum w).
std::vector<PartialSlice> loss_partials(const Op& op, const IpuMachine& machine);

// Where a weighted loss's sums are reduced to: `sums` elements, all on tile 0 beside the output.
LinearLayout loss_sums_layout(std::int64_t sums);

// mse's rows on a tile holding elements `elements` of the flat [M, C] layout: the rows they touch (whose
// weights the tile holds), and the rows whose first element it holds (whose weights it counts in the
// weights' sum, so that a row split between two tiles counts once).
Range rows_touched(Range elements, std::int64_t cols);
Range rows_starting(Range elements, std::int64_t cols);
// The most rows `elements` consecutive elements of `cols`-wide rows touch, wherever they start.
std::int64_t rows_spanned(std::int64_t elements, std::int64_t cols);

// A weighted loss worker over `items` (cross entropy: rows; mse: elements, C to a row), as the planner
// and the program cost it: the unweighted worker plus loss_weight_worker_cycles for the rows it scales.
sim::Cycles weighted_loss_worker_cycles(const Op& op, std::int64_t items, const CodeletCosts& c);

OpPlan plan_optimizer_step(const Op& op, const IpuMachine& machine);
OpPlan plan_sum_to(const Op& op, const IpuMachine& machine);
OpPlan plan_loss(const Op& op, const IpuMachine& machine);  // loss and loss_grad

}  // namespace tilesim::ipu
