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
// the sum of that tile's losses, reduced into the one output on tile 0.
std::vector<PartialSlice> loss_partials(const Op& op, const IpuMachine& machine);

OpPlan plan_optimizer_step(const Op& op, const IpuMachine& machine);
OpPlan plan_sum_to(const Op& op, const IpuMachine& machine);
OpPlan plan_loss(const Op& op, const IpuMachine& machine);  // loss and loss_grad

}  // namespace tilesim::ipu
