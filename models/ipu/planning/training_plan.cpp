#include "models/ipu/planning/training_plan.hpp"

#include <algorithm>

#include "common/integer_math.hpp"
#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/machine/training_codelet_costs.hpp"
#include "models/ipu/planning/phase_builders.hpp"
#include "models/ipu/planning/phase_estimate.hpp"
#include "models/ipu/planning/system_estimate.hpp"
#include "sim/program.hpp"

namespace tilesim::ipu {

namespace {

// A plan over the linear layout of `elements` (its fields as plan_elementwise fills them).
OpPlan linear_plan(const Op& op, std::int64_t elements, const IpuMachine& m) {
  OpPlan p;
  p.kind = op.kind;
  const LinearLayout l = linear_layout(elements, m.value_bytes(), m);
  p.rows = op.shape.num_inputs;
  p.rows_per_block = l.elements_per_tile;
  p.columns_per_block = 1;
  p.tiles_used = l.tiles_used;
  return p;
}

}  // namespace

std::vector<PartialSlice> sum_to_partials(const Op& op, const LinearLayout& in) {
  const std::int64_t F = op.shape.num_features, G = op.shape.other_groups, per_group = F / G;
  const bool row_sums = op.shape.other_rows != 1 || op.shape.num_inputs == 1;
  std::vector<PartialSlice> partials;
  for (std::int64_t t = 0; t < in.tiles_used; ++t) {
    const Range r = in.tile_range(t);
    Range outputs;
    if (row_sums) {
      // Output r * G + g sums flat elements [(r * G + g) * per_group, ... + per_group).
      outputs = {r.begin / per_group, ceil_div(r.end, per_group)};
    } else if (r.size() >= F || r.begin % F + r.size() > F) {
      outputs = {0, G};
    } else {
      outputs = {(r.begin % F) / per_group, ((r.end - 1) % F) / per_group + 1};
    }
    partials.push_back({t, outputs});
  }
  return partials;
}

sim::Cycles partial_sum_worker_cycles(std::int64_t outputs_per_worker, std::int64_t outputs, std::int64_t elements,
                                      const CodeletCosts& c) {
  if (outputs_per_worker <= 0) return 0;
  return reduce_worker_cycles(outputs_per_worker, ceil_div(elements, outputs), c);
}

RowBlocks loss_row_blocks(std::int64_t rows, const IpuMachine& machine) {
  RowBlocks b;
  b.rows = rows;
  b.rows_per_tile = ceil_div(rows, std::min<std::int64_t>(rows, machine.chip.num_tiles));
  b.tiles = ceil_div(rows, b.rows_per_tile);
  return b;
}

std::vector<PartialSlice> loss_partials(const Op& op, const IpuMachine& machine) {
  const std::int64_t tiles = op.loss == LossFn::cross_entropy
                                 ? loss_row_blocks(op.shape.num_inputs, machine).tiles
                                 : linear_layout(op.shape.num_inputs * op.shape.num_features, machine.value_bytes(), machine).tiles_used;
  const bool weighted = op.loss_row_weights() >= 0, gradient = op.kind == OpKind::loss_grad;
  const LinearLayout in = linear_layout(op.shape.num_inputs * op.shape.num_features, machine.value_bytes(), machine);
  std::vector<PartialSlice> partials;
  for (std::int64_t t = 0; t < tiles; ++t) {
    // The gradient's weight sums come from the tiles that count some row: for mse, those holding a
    // row's first element.
    if (weighted && gradient && op.loss == LossFn::mse && rows_starting(in.tile_range(t), op.shape.num_features).empty()) continue;
    partials.push_back({t, {0, weighted && !gradient ? 2 : 1}});
  }
  return partials;
}

LinearLayout loss_sums_layout(std::int64_t sums) { return {sums, sums, 1}; }

Range rows_touched(Range elements, std::int64_t cols) {
  if (elements.empty()) return {elements.begin / cols, elements.begin / cols};
  return {elements.begin / cols, (elements.end - 1) / cols + 1};
}

Range rows_starting(Range elements, std::int64_t cols) {
  return {ceil_div(elements.begin, cols), std::max(ceil_div(elements.begin, cols), ceil_div(elements.end, cols))};
}

std::int64_t rows_spanned(std::int64_t elements, std::int64_t cols) {
  if (elements <= 0) return 0;
  return std::min(elements, (elements + cols - 2) / cols + 1);  // a row's tail, whole rows, a row's head
}

sim::Cycles weighted_loss_worker_cycles(const Op& op, std::int64_t items, const CodeletCosts& c) {
  const bool gradient = op.kind == OpKind::loss_grad;
  if (op.loss == LossFn::cross_entropy)
    return cross_entropy_rows_worker_cycles(items, op.shape.num_features, gradient, c) + loss_weight_worker_cycles(items, gradient, c);
  return mse_worker_cycles(items, gradient, c) + loss_weight_worker_cycles(rows_spanned(items, op.shape.num_features), gradient, c);
}

OpPlan plan_optimizer_step(const Op& op, const IpuMachine& m) {
  const std::int64_t P = op.shape.num_inputs * op.shape.num_features, S = op.optimizer.state_rows();
  OpPlan p = linear_plan(op, P, m);
  const std::int64_t n = std::min(p.rows_per_block, P);  // the busiest tile's elements: tile 0's
  const bool adam = op.optimizer.kind == OptimizerSpec::Kind::adam;
  if (adam && p.tiles_used > 1) {
    // Adam's step number, on tile 0, to every other tile the parameter spans.
    append_phase(p, "sync", m.chip.sync_cycles);
    append_phase(p, "exchange: step number to the parameter's tiles", exchange_phase_estimate(kFloat32Bytes, kFloat32Bytes, m),
              PhaseTraffic::linear_layout);
  }
  const sim::Cycles update =
      spread_vertex_estimate(n, m, [&](std::int64_t k) { return optimizer_worker_cycles(op.optimizer, k, m.codelets); });
  append_phase(p, "compute: " + to_string(op.optimizer.kind) + " update (ScaledAdd and elementwise vertices)",
            compute_phase_estimate(update, m));
  append_loop_control(p, m);
  add_cross_chip_estimate(p, m);
  // Parameter, gradient, state rows and the output rows (parameter and state), and Adam's step number.
  p.estimated_peak_tile_bytes = 2 * aligned(n * m.value_bytes()) + aligned(S * n * m.value_bytes()) + aligned((1 + S) * n * m.value_bytes()) +
                                (adam ? 2 * aligned(kFloat32Bytes) : 0);
  return p;
}

OpPlan plan_sum_to(const Op& op, const IpuMachine& m) {
  const LinearLayout in = linear_layout(op.shape.num_inputs * op.shape.num_features, m.value_bytes(), m);
  const LinearLayout out = linear_layout(op.shape.other_rows * op.shape.other_groups, m.value_bytes(), m);
  OpPlan p = linear_plan(op, in.elements, m);
  const std::vector<PartialSlice> partials = sum_to_partials(op, in);
  sim::Cycles busiest = 0;
  std::int64_t partial_bytes = 0;
  for (const auto& s : partials) {
    const std::int64_t k = s.outputs.size(), elements = in.tile_range(s.tile).size();
    busiest = std::max(busiest, spread_vertex_estimate(k, m, [&](std::int64_t kw) {
                         return partial_sum_worker_cycles(kw, k, elements, m.codelets);
                       }));
    partial_bytes = std::max(partial_bytes, aligned(k * kPartialBytes));
  }
  append_phase(p, "compute: Reduce (partial sums on each tile)", compute_phase_estimate(busiest, m));
  const ReductionSchedule schedule = plan_reduction(partials, out, false, m);
  const std::int64_t reduction_bytes = add_reduction_estimate(p, schedule, false, m);
  append_loop_control(p, m);
  add_cross_chip_estimate(p, m);
  p.estimated_peak_tile_bytes = aligned(in.elements_per_tile * m.value_bytes()) + partial_bytes + reduction_bytes;
  return p;
}

namespace {

// plan_loss with row weights (training_plan.hpp), phase by phase as loss_program.cpp builds it. Tile 0
// is the busiest: it holds the first row block (or linear range), every sum and the output.
OpPlan plan_weighted_loss(const Op& op, const IpuMachine& m) {
  const std::int64_t M = op.shape.num_inputs, C = op.shape.num_features;
  const LinearLayout in = linear_layout(M * C, m.value_bytes(), m);
  const std::int64_t in_bytes = aligned(in.elements_per_tile * m.value_bytes());
  const bool gradient = op.kind == OpKind::loss_grad, ce = op.loss == LossFn::cross_entropy;
  const RowBlocks rows = loss_row_blocks(M, m);
  OpPlan p = linear_plan(op, M * C, m);
  const std::int64_t tiles = ce ? rows.tiles : in.tiles_used;
  const std::int64_t items = ce ? rows.rows_per_tile : std::min(in.elements_per_tile, M * C);
  const std::int64_t weight_rows = ce ? rows.rows_per_tile : std::min(M, rows_spanned(in.elements_per_tile, C));
  const std::int64_t counted_rows = ce ? rows.rows_per_tile : rows_starting({0, items}, C).size();
  const std::int64_t block_bytes = rows.rows_per_tile * C * m.value_bytes();
  // Predictions (linear), the weights, and cross entropy's row block and labels or mse's targets.
  std::int64_t bytes = in_bytes + aligned(weight_rows * kFloat32Bytes);
  if (ce) {
    p.rows_per_block = rows.rows_per_tile;
    p.columns_per_block = C;
    p.tiles_used = std::max(in.tiles_used, rows.tiles);
    bytes += aligned(block_bytes) + aligned(rows.rows_per_tile * kIndexBytes);
  } else {
    bytes += in_bytes;
  }
  const sim::Cycles work = spread_vertex_estimate(items, m, [&](std::int64_t k) { return weighted_loss_worker_cycles(op, k, m.codelets); });
  if (gradient) {
    const sim::Cycles partial_sum =
        spread_vertex_estimate(1, m, [&](std::int64_t k) { return reduce_worker_cycles(k, counted_rows, m.codelets); });
    append_phase(p, "compute: row weights' partial sums", compute_phase_estimate(partial_sum, m));
    const ReductionSchedule schedule = plan_reduction(loss_partials(op, m), loss_sums_layout(1), false, m);
    // The partial, the reduction's buffers, and the copy of the sum other tiles receive.
    bytes += aligned(kFloat32Bytes) + add_reduction_estimate(p, schedule, false, m) + aligned(kFloat32Bytes);
    const std::int64_t broadcast = tiles > 1 ? kFloat32Bytes : 0;
    append_phase(p, "sync", m.chip.sync_cycles);
    append_phase(p, ce ? "exchange: the weights' sum to every tile, logits' rows to row blocks" : "exchange: the weights' sum to every tile",
              exchange_phase_estimate((ce ? in.elements_per_tile * m.value_bytes() : 0) + broadcast, (ce ? block_bytes : 0) + broadcast, m),
              PhaseTraffic::linear_layout);
    append_phase(p, ce ? "compute: softmax minus one-hot, times w / sum w" : "compute: mse gradient, times w / sum w",
              compute_phase_estimate(work, m));
    if (ce) {
      append_phase(p, "sync", m.chip.sync_cycles);
      append_phase(p, "exchange: gradient to linear layout", exchange_phase_estimate(block_bytes, in.elements_per_tile * m.value_bytes(), m),
                PhaseTraffic::linear_layout);
      bytes += aligned(block_bytes);
    }
    bytes += in_bytes;  // the linear output
  } else {
    if (ce) {
      append_phase(p, "sync", m.chip.sync_cycles);
      append_phase(p, "exchange: logits' rows to row blocks", exchange_phase_estimate(in.elements_per_tile * m.value_bytes(), block_bytes, m),
                PhaseTraffic::linear_layout);
    }
    append_phase(p, "compute: weighted row losses and weights (partial sums)", compute_phase_estimate(work, m));
    const ReductionSchedule schedule = plan_reduction(loss_partials(op, m), loss_sums_layout(2), false, m);
    bytes += aligned(2 * kFloat32Bytes) + add_reduction_estimate(p, schedule, false, m);
    const sim::Cycles mean = spread_vertex_estimate(1, m, [&](std::int64_t) { return weighted_mean_worker_cycles(m.codelets); });
    append_phase(p, "sync", m.chip.sync_cycles);
    append_phase(p, "compute: weighted mean (over the weights' sum)", compute_phase_estimate(mean, m));
    bytes += aligned(kFloat32Bytes);
  }
  append_loop_control(p, m);
  add_cross_chip_estimate(p, m);
  p.estimated_peak_tile_bytes = bytes;
  return p;
}

}  // namespace

OpPlan plan_loss(const Op& op, const IpuMachine& m) {
  if (op.loss_row_weights() >= 0) return plan_weighted_loss(op, m);
  const std::int64_t M = op.shape.num_inputs, C = op.shape.num_features;
  const LinearLayout in = linear_layout(M * C, m.value_bytes(), m);
  const std::int64_t in_bytes = aligned(in.elements_per_tile * m.value_bytes());
  const bool gradient = op.kind == OpKind::loss_grad;
  OpPlan p = linear_plan(op, M * C, m);
  std::int64_t bytes = 0;
  if (op.loss == LossFn::mse) {
    // Predictions and targets share the linear layout: everything happens where they lie.
    const sim::Cycles work = spread_vertex_estimate(std::min(in.elements_per_tile, M * C), m, [&](std::int64_t k) {
      return mse_worker_cycles(k, gradient, m.codelets);
    });
    append_phase(p, gradient ? "compute: mse gradient" : "compute: squared errors (partial sums)", compute_phase_estimate(work, m));
    bytes = (gradient ? 3 : 2) * in_bytes;
  } else {
    const RowBlocks rows = loss_row_blocks(M, m);
    const std::int64_t block_bytes = rows.rows_per_tile * C * m.value_bytes();
    p.rows_per_block = rows.rows_per_tile;
    p.columns_per_block = C;
    p.tiles_used = std::max(in.tiles_used, rows.tiles);
    append_phase(p, "sync", m.chip.sync_cycles);
    append_phase(p, "exchange: logits' rows to row blocks", exchange_phase_estimate(in.elements_per_tile * m.value_bytes(), block_bytes, m),
              PhaseTraffic::linear_layout);
    const sim::Cycles work = spread_vertex_estimate(rows.rows_per_tile, m, [&](std::int64_t r) {
      return cross_entropy_rows_worker_cycles(r, C, gradient, m.codelets);
    });
    append_phase(p, gradient ? "compute: softmax minus one-hot, over M" : "compute: row losses (partial sums)",
              compute_phase_estimate(work, m));
    // Logits (linear and row block) and labels; the gradient's block and its linear output.
    bytes = in_bytes + aligned(block_bytes) + aligned(rows.rows_per_tile * kIndexBytes);
    if (gradient) {
      append_phase(p, "sync", m.chip.sync_cycles);
      append_phase(p, "exchange: gradient to linear layout", exchange_phase_estimate(block_bytes, in.elements_per_tile * m.value_bytes(), m),
                PhaseTraffic::linear_layout);
      bytes += aligned(block_bytes) + in_bytes;
    }
  }
  if (!gradient) {
    const ReductionSchedule schedule = plan_reduction(loss_partials(op, m), linear_layout(1, m.value_bytes(), m), true, m);
    bytes += aligned(kFloat32Bytes) + add_reduction_estimate(p, schedule, true, m);
  }
  append_loop_control(p, m);
  add_cross_chip_estimate(p, m);
  p.estimated_peak_tile_bytes = bytes;
  return p;
}

}  // namespace tilesim::ipu
