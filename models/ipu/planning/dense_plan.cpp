// Planning the dense ops: matmul and segment_matmul on the AMP units, unary and binary elementwise ops
// in the linear layout. Pure functions of the shapes and the machine file, like the gather/scatter
// planner: each candidate split is costed phase by phase (compute sets, syncs, exchanges, the same
// terms the programs pay) and the cheapest one that fits the SRAM budget wins.
#include <algorithm>
#include <stdexcept>

#include "common/error.hpp"
#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/machine/training_codelet_costs.hpp"
#include "models/ipu/planning/blocks.hpp"
#include "models/ipu/planning/linear_layout.hpp"
#include "models/ipu/planning/phase_builders.hpp"
#include "models/ipu/planning/phase_estimate.hpp"
#include "models/ipu/planning/plan.hpp"
#include "models/ipu/planning/system_estimate.hpp"
#include "models/ipu/planning/temporary_budget.hpp"
#include "models/ipu/planning/training_plan.hpp"
#include "sim/program.hpp"

namespace tilesim::ipu {

namespace {

// Bytes of a linearly mapped operand of `elements` values on its busiest tile (0 for an absent one).
std::int64_t linear_operand_bytes(std::int64_t elements, const IpuMachine& m) {
  return elements > 0 ? linear_tile_bytes(elements, m.value_bytes(), m) : 0;
}

OpPlan plan_elementwise(const Op& op, const IpuMachine& m) {
  OpPlan p;
  p.kind = op.kind;
  const std::int64_t elements = op.shape.num_inputs * op.shape.num_features;
  const LinearLayout l = linear_layout(elements, m.value_bytes(), m);
  p.rows = op.shape.num_inputs;
  p.rows_per_block = l.elements_per_tile;
  p.columns_per_block = 1;
  p.tiles_used = l.tiles_used;
  // Input and output, and unary_grad's gradient, which has the input's layout.
  std::int64_t bytes = (op.kind == OpKind::unary_grad ? 3 : 2) * aligned(l.elements_per_tile * m.value_bytes());
  if (op.kind == OpKind::binary) {
    // The tile's rows of `other` (or its one row), received unless `other` has the input's shape.
    const std::int64_t other_elements = op.shape.other_rows * op.shape.other_groups;
    if (other_elements != elements) {
      const std::int64_t rows_spanned = std::min(op.shape.num_inputs, ceil_div(l.elements_per_tile, op.shape.num_features) + 1);
      const std::int64_t needed = op.shape.other_rows == 1 ? op.shape.other_groups : rows_spanned * op.shape.other_groups;
      append_phase(p, "sync", m.chip.sync_cycles);
      append_phase(p, "exchange: broadcast operand to the tiles that need it",
                exchange_phase_estimate(linear_operand_bytes(other_elements, m), needed * m.value_bytes(), m), PhaseTraffic::linear_layout);
      bytes += aligned(needed * m.value_bytes()) + aligned(linear_operand_bytes(other_elements, m));
      p.estimated_temporary_tile_bytes = aligned(needed * m.value_bytes());  // the received rows of `other`
    }
  }
  const auto& c = m.codelets;
  // The busiest tile holds a full share, or everything when the tensor fits on one tile.
  const std::int64_t busiest = std::min(l.elements_per_tile, elements);
  const sim::Cycles compute = spread_vertex_estimate(busiest, m, [&](std::int64_t n) {
    switch (op.kind) {
      case OpKind::unary: return unary_worker_cycles(op.unary, n, c);
      case OpKind::unary_grad: return unary_grad_worker_cycles(op.unary, n, c);
      default: return binary_worker_cycles(op.binary, n, c);
    }
  });
  const std::string codelet = op.kind == OpKind::binary ? "BinaryOp " + to_string(op.binary)
                              : op.kind == OpKind::unary_grad ? "UnaryGrad " + to_string(op.unary)
                                                              : "UnaryOp " + to_string(op.unary);
  append_phase(p, "compute: " + codelet, compute_phase_estimate(compute, m));
  // No sync after it: nothing is exchanged after the compute (sim/program.hpp).
  append_loop_control(p, m);
  p.estimated_peak_tile_bytes = bytes;
  return p;
}

// A cast on the output's linear layout: each tile converts the elements it holds, reading the input in
// place where the input's layout (at its own element size) gives the tile the same range, else after an
// exchange that brings the tile's range (cast_program.cpp).
OpPlan plan_cast(const Op& op, const IpuMachine& m) {
  OpPlan p;
  p.kind = op.kind;
  const std::int64_t elements = op.shape.num_inputs * op.shape.num_features;
  const std::int64_t in_bytes = dtype_bytes(op.input_dtype), out_bytes = m.value_bytes();
  const LinearLayout out = linear_layout(elements, out_bytes, m), in = linear_layout(elements, in_bytes, m);
  p.rows = op.shape.num_inputs;
  p.rows_per_block = out.elements_per_tile;
  p.columns_per_block = 1;
  p.tiles_used = std::max(out.tiles_used, in.tiles_used);
  std::int64_t bytes = aligned(in.elements_per_tile * in_bytes) + aligned(out.elements_per_tile * out_bytes);
  if (in.elements_per_tile != out.elements_per_tile) {
    append_phase(p, "sync", m.chip.sync_cycles);
    append_phase(p, "exchange: input to the output's layout",
              exchange_phase_estimate(in.elements_per_tile * in_bytes, out.elements_per_tile * in_bytes, m), PhaseTraffic::linear_layout);
    bytes += aligned(out.elements_per_tile * in_bytes);
    p.estimated_temporary_tile_bytes = aligned(out.elements_per_tile * in_bytes);
  }
  const std::int64_t busiest = std::min(out.elements_per_tile, elements);
  const sim::Cycles compute = spread_vertex_estimate(busiest, m, [&](std::int64_t n) {
    return cast_worker_cycles(op.input_dtype, op.dtype, op.cast_scale() != 1.0f, n, m.codelets);
  });
  append_phase(p, "compute: Cast " + to_string(op.input_dtype) + " -> " + to_string(op.dtype), compute_phase_estimate(compute, m));
  append_loop_control(p, m);
  p.estimated_peak_tile_bytes = bytes;
  return p;
}

// Equal segments, for planning before the offsets are known.
std::vector<std::int32_t> equal_offsets(const Op& op) {
  std::vector<std::int32_t> offsets(static_cast<std::size_t>(op.shape.num_segments + 1));
  for (std::int64_t s = 0; s <= op.shape.num_segments; ++s) {
    offsets[static_cast<std::size_t>(s)] = static_cast<std::int32_t>(s * op.shape.num_inputs / op.shape.num_segments);
  }
  return offsets;
}

// The forward and both backward forms (ir/op_graph.hpp): each non-empty segment is one matmul on its
// own tiles. Forward and transpose_weight (the input's gradient, g_s @ W_s^T): the segment's rows times
// its K x N (or stored N x K) weight block. transpose_input (the weight's gradient, x_s^T @ g_s): a
// K x N product whose inner dimension is the segment's rows, its input block stored transposed; an
// empty segment's K x N block is zero, filled on a tile after the parts' (programs/matmul_program.cpp).
OpPlan plan_segment_matmul(const Op& op, const std::vector<std::int32_t>& offsets, const IpuMachine& m) {
  const std::int64_t S = op.shape.num_segments, K = op.shape.num_features, N = op.shape.out_features;
  const bool weight_gradient = op.transpose_input;
  const MatmulTranspose transpose{op.transpose_input, op.transpose_weight};
  const std::int64_t T = m.chip.num_tiles;
  if (static_cast<std::int64_t>(offsets.size()) != S + 1) {
    throw std::invalid_argument("segment_matmul '" + op.name + "': expected " + std::to_string(S + 1) + " offsets, found " +
                                std::to_string(offsets.size()));
  }
  std::vector<std::int64_t> nonempty;
  for (std::int64_t s = 0; s < S; ++s) {
    if (offsets[static_cast<std::size_t>(s + 1)] > offsets[static_cast<std::size_t>(s)]) nonempty.push_back(s);
  }
  OpPlan p;
  p.kind = op.kind;
  p.rows = op.shape.num_inputs;
  // Tiles in proportion to each segment's rows (its share of the FLOPs), at least one each; more
  // segments than tiles share tiles round-robin.
  const std::int64_t total_rows = std::max<std::int64_t>(1, op.shape.num_inputs);
  std::int64_t next_tile = 0;
  sim::Cycles slowest = 0;
  std::int64_t peak = 0;
  const OpPlan* slowest_plan = nullptr;
  std::vector<OpPlan> part_plans;
  part_plans.reserve(nonempty.size());
  for (std::size_t j = 0; j < nonempty.size(); ++j) {
    const std::int64_t s = nonempty[j];
    const std::int64_t row_begin = offsets[static_cast<std::size_t>(s)];
    const std::int64_t rows = offsets[static_cast<std::size_t>(s + 1)] - row_begin;
    std::int64_t tiles = 1, first = static_cast<std::int64_t>(j) % T;
    if (static_cast<std::int64_t>(nonempty.size()) <= T) {
      const std::int64_t left_segments = static_cast<std::int64_t>(nonempty.size() - j - 1);
      tiles = std::max<std::int64_t>(1, std::min(T - next_tile - left_segments, rows * T / total_rows));
      first = next_tile;
      next_tile += tiles;
    }
    OpPlan best, smallest;
    const std::int64_t product_rows = weight_gradient ? K : rows, product_inner = weight_gradient ? rows : K;
    if (!plan_matmul(product_rows, product_inner, N, false, tiles, m, available_memory_proportion(op, m), best, smallest, transpose)) {
      throw_does_not_fit(op, m,
                         "segment " + std::to_string(s) + " on " + std::to_string(tiles) + " tiles: " +
                             std::to_string(smallest.split.row_blocks) + " row blocks x " +
                             std::to_string(smallest.split.column_blocks) + " column blocks x " +
                             std::to_string(smallest.split.k_blocks) + " inner blocks",
                         smallest.estimated_peak_tile_bytes);
    }
    MatmulPart part;
    part.segment = s;
    part.row_begin = row_begin;
    part.rows = rows;
    part.first_tile = first;
    part.tiles = tiles;
    part.split = best.split;
    part.rows_per_block = best.rows_per_block;
    part.columns_per_block = best.columns_per_block;
    part.k_per_block = best.k_per_block;
    p.parts.push_back(part);
    part_plans.push_back(std::move(best));
    p.tiles_used = std::max(p.tiles_used, std::min(T, first + tiles));
  }
  // The parts run in the same supersteps: the op takes as long as its slowest part (a reduction step
  // anywhere is a step for all).
  for (const auto& pp : part_plans) {
    if (pp.estimated_cycles > slowest) {
      slowest = pp.estimated_cycles;
      slowest_plan = &pp;
    }
    peak = std::max(peak, pp.estimated_peak_tile_bytes);
  }
  if (slowest_plan) {
    p.phases = slowest_plan->phases;
    p.estimated_cycles = slowest_plan->estimated_cycles;
    p.objective_cycles = slowest_plan->objective_cycles;
    p.split = slowest_plan->split;
    p.rows_per_block = slowest_plan->rows_per_block;
    p.columns_per_block = slowest_plan->columns_per_block;
    p.k_per_block = slowest_plan->k_per_block;
    p.estimated_temporary_tile_bytes = slowest_plan->estimated_temporary_tile_bytes;
    p.available_memory_proportion = slowest_plan->available_memory_proportion;
    p.temporary_budget_bytes = slowest_plan->temporary_budget_bytes;
  }
  for (const auto& pp : part_plans) {
    p.estimated_temporary_tile_bytes = std::max(p.estimated_temporary_tile_bytes, pp.estimated_temporary_tile_bytes);
    p.temporary_budget_met = p.temporary_budget_met && pp.temporary_budget_met;
  }
  // The weight's gradient of an empty segment: a zero K x N block on one tile.
  if (weight_gradient && static_cast<std::int64_t>(nonempty.size()) < S) {
    peak = std::max(peak, K * N * m.value_bytes());
    p.tiles_used = std::max<std::int64_t>(p.tiles_used, std::min<std::int64_t>(T, next_tile + 1));
  }
  p.estimated_peak_tile_bytes = peak;
  return p;
}

}  // namespace

OpPlan estimate_matmul(std::int64_t rows, std::int64_t inner, std::int64_t cols, bool bias, const Split& split,
                       std::int64_t tiles, const IpuMachine& m, MatmulTranspose transpose) {
  if (split.row_blocks < 1 || split.column_blocks < 1 || split.k_blocks < 1) {
    throw std::logic_error("estimate_matmul: split factors must be positive");
  }
  OpPlan p;
  p.kind = OpKind::matmul;
  p.rows = rows;
  const std::int64_t grain = std::max<std::int64_t>(1, m.planner.column_grain_bytes / m.value_bytes());
  p.rows_per_block = ceil_div(rows, std::min(split.row_blocks, rows));
  p.split.row_blocks = ceil_div(rows, p.rows_per_block);
  const std::int64_t grains = ceil_div(cols, grain);
  p.columns_per_block = std::min(cols, ceil_div(grains, std::min(split.column_blocks, grains)) * grain);
  p.split.column_blocks = ceil_div(cols, p.columns_per_block);
  p.k_per_block = ceil_div(inner, std::min(split.k_blocks, inner));
  p.split.k_blocks = ceil_div(inner, p.k_per_block);
  p.tiles_used = p.split.row_blocks * p.split.column_blocks * p.split.k_blocks;
  if (p.tiles_used > tiles) throw std::logic_error("estimate_matmul: split uses more tiles than it was given");

  const auto& c = m.codelets;
  const std::int64_t mb = p.rows_per_block, nb = p.columns_per_block, kb = p.k_per_block, K = p.split.k_blocks;
  // Operands and output of the op's value type; with K > 1 the products are float32 partials.
  const std::int64_t vb = m.value_bytes();
  const std::int64_t x_block = mb * kb * vb, w_block = kb * nb * vb, part = mb * nb * (K > 1 ? kPartialBytes : vb);
  const std::int64_t bias_block = bias ? nb * m.value_bytes() : 0;
  const std::int64_t x_linear = linear_operand_bytes(rows * inner, m), w_linear = linear_operand_bytes(inner * cols, m);
  const std::int64_t out_linear = linear_operand_bytes(rows * cols, m), bias_linear = bias ? linear_operand_bytes(cols, m) : 0;
  const std::int64_t chunk = ceil_div(mb, K);

  // 1: operands from the linear layout to the tiles of the split (broadcast over the other factor).
  append_phase(p, "sync", m.chip.sync_cycles);
  append_phase(p, "exchange: input, weight (and bias) blocks to the tiles",
            exchange_phase_estimate(x_linear + w_linear + bias_linear, x_block + w_block + bias_block, m),
            PhaseTraffic::linear_layout);
  // 2: the AMP vertex on every tile (it occupies the whole tile: its cost function gives tile cycles),
  // after the transposes of a transposed operand's block (multi-worker vertices, before it).
  sim::Cycles transposes = 0;
  auto transpose_block = [&](std::int64_t elements) {
    return spread_vertex_estimate(elements, m, [&](std::int64_t n) { return transpose_worker_cycles(n, c); });
  };
  if (transpose.input) transposes += transpose_block(mb * kb);
  if (transpose.weight) transposes += transpose_block(kb * nb);
  append_phase(p, transposes > 0 ? "compute: transpose blocks, AMP matmul" : "compute: AMP matmul",
            compute_phase_estimate(transposes + amp_matmul_tile_cycles(mb, kb, nb, c), m));
  append_phase(p, "sync", m.chip.sync_cycles);
  std::int64_t bytes = aligned(x_block) + aligned(w_block) + aligned(part) + aligned(x_linear) + aligned(w_linear) +
                       aligned(out_linear) + (bias ? aligned(bias_block) + aligned(bias_linear) : 0);
  // The block as it arrived (stored transposed) beside the transposed copy the AMP vertex reads.
  if (transpose.input) bytes += aligned(x_block);
  if (transpose.weight) bytes += aligned(w_block);
  const std::int64_t final_bytes = (K > 1 ? chunk : mb) * nb * vb;
  if (K > 1 || bias) {
    if (K > 1) {
      append_phase(p, "exchange: partial products to their reducers", exchange_phase_estimate((K - 1) * chunk * nb * kPartialBytes, (K - 1) * chunk * nb * kPartialBytes, m),
                PhaseTraffic::among_plan_tiles);
      bytes += aligned((K - 1) * chunk * nb * kPartialBytes) + aligned(chunk * nb * vb);
    }
    const std::int64_t partials = K + (bias ? 1 : 0);
    // The partial products are float32: their Reduce runs at the float32 figures.
    const sim::Cycles reduce =
        K > 1 ? spread_vertex_estimate(chunk * nb, m, [&](std::int64_t n) { return reduce_worker_cycles(n, partials, float32_partial_codelets(m)); })
              : spread_vertex_estimate(mb * nb, m, [&](std::int64_t n) { return binary_worker_cycles(BinaryFn::add, n, c); });
    append_phase(p, K > 1 ? "compute: reduce partial products" : "compute: add bias", compute_phase_estimate(reduce, m));
    append_phase(p, "sync", m.chip.sync_cycles);
  }
  append_phase(p, "exchange: output to linear layout", exchange_phase_estimate(final_bytes, out_linear, m), PhaseTraffic::linear_layout);
  append_loop_control(p, m);
  add_cross_chip_estimate(p, m);
  p.estimated_peak_tile_bytes = bytes;
  // Temporaries: everything but the linearly mapped operands and output, which stay resident (the
  // blocks received for the AMP vertex, their transposed copies, partial products and their reduction).
  p.estimated_temporary_tile_bytes =
      bytes - (aligned(x_linear) + aligned(w_linear) + aligned(out_linear) + (bias ? aligned(bias_linear) : 0));
  return p;
}

bool plan_matmul(std::int64_t rows, std::int64_t inner, std::int64_t cols, bool bias, std::int64_t tiles,
                 const IpuMachine& m, double proportion, OpPlan& best, OpPlan& smallest, MatmulTranspose transpose) {
  const std::int64_t grain = std::max<std::int64_t>(1, m.planner.column_grain_bytes / m.value_bytes());
  std::vector<OpPlan> plans;
  for (std::int64_t s : powers_of_two_up_to(std::min(rows, tiles))) {
    for (std::int64_t h : powers_of_two_up_to(std::min(ceil_div(cols, grain), tiles / s))) {
      for (std::int64_t k : powers_of_two_up_to(std::min(inner, tiles / (s * h)))) {
        if (s * h * k > tiles) continue;
        plans.push_back(estimate_matmul(rows, inner, cols, bias, {s, h, 1, k}, tiles, m, transpose));
        if (plans.size() == 1 || plans.back().estimated_peak_tile_bytes < smallest.estimated_peak_tile_bytes) smallest = plans.back();
      }
    }
  }
  return choose_within_budget(plans, proportion, m, best) != nullptr;
}

OpPlan plan_dense_op(const Op& op, const std::vector<std::int32_t>& offsets, const IpuMachine& machine) {
  if (machine.value_dtype != op.dtype) return plan_dense_op(op, offsets, machine_for_op_dtype(machine, op));
  switch (op.kind) {
    case OpKind::unary:
    case OpKind::binary:
    case OpKind::unary_grad:
    case OpKind::cast: {
      OpPlan p = op.kind == OpKind::cast ? plan_cast(op, machine) : plan_elementwise(op, machine);
      record_budget(p, available_memory_proportion(op, machine), machine);
      if (p.estimated_peak_tile_bytes > machine.chip.sram_bytes_per_tile) {
        throw_does_not_fit(op, machine, "the linear layout over " + std::to_string(p.tiles_used) + " tiles",
                           p.estimated_peak_tile_bytes);
      }
      return p;
    }
    case OpKind::matmul: {
      OpPlan best, smallest;
      if (!plan_matmul(op.shape.num_inputs, op.shape.num_features, op.shape.out_features, op.bias >= 0,
                       machine.chip.num_tiles, machine, available_memory_proportion(op, machine), best, smallest,
                       {op.transpose_input, op.transpose_weight})) {
        throw_does_not_fit(op, machine,
                           std::to_string(smallest.split.row_blocks) + " row blocks x " +
                               std::to_string(smallest.split.column_blocks) + " column blocks x " +
                               std::to_string(smallest.split.k_blocks) + " inner blocks",
                           smallest.estimated_peak_tile_bytes);
      }
      return best;
    }
    case OpKind::segment_matmul:
      return plan_segment_matmul(op, offsets.empty() ? equal_offsets(op) : offsets, machine);
    case OpKind::optimizer_step:
    case OpKind::sum_to:
    case OpKind::loss:
    case OpKind::loss_grad: {
      const OpPlan p = op.kind == OpKind::optimizer_step ? plan_optimizer_step(op, machine)
                       : op.kind == OpKind::sum_to       ? plan_sum_to(op, machine)
                                                         : plan_loss(op, machine);
      if (p.estimated_peak_tile_bytes > machine.chip.sram_bytes_per_tile) {
        throw_does_not_fit(op, machine, "the linear layout over " + std::to_string(p.tiles_used) + " tiles",
                           p.estimated_peak_tile_bytes);
      }
      return p;
    }
    default: break;
  }
  throw std::logic_error("plan_dense_op: " + to_string(op.kind) + " is planned by the gather/scatter planner");
}

}  // namespace tilesim::ipu
