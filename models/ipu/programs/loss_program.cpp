// loss and loss_grad as BSP programs (planning/training_plan.hpp says what each step does). Cross
// entropy needs whole rows on a tile for its row max and log-sum-exp, so the logits first move from
// the linear layout onto row blocks (labels are written there directly: they are graph inputs); mse
// works where its operands lie. The loss is each tile's sum of losses, reduced across tiles into the
// one output on tile 0 and divided there by the number of terms (programs/reduction_program.hpp).
// Row weights (Op::aux) are written beside the rows they scale; the weighted loss reduces two sums per
// tile and divides them in a last step, and the weighted gradient first reduces the weights' sum and
// broadcasts it (planning/training_plan.hpp). Values follow the reference (in double from the operands,
// rounded once per stored result). Predictions, targets, gradients and the loss are of the op's value
// type (the vertex bodies' storage type V, value_storage.hpp); row weights, partial sums and the
// weighted loss's two sums are float32.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/machine/training_codelet_costs.hpp"
#include "models/ipu/planning/training_plan.hpp"
#include "models/ipu/programs/linear_buffers.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "models/ipu/programs/reduction_program.hpp"
#include "models/ipu/programs/value_storage.hpp"

namespace tilesim::ipu {

namespace {

// One row's log-sum-exp, in double.
template <class V>
double log_sum_exp(const V* x, std::int64_t c) {
  double max = -INFINITY;
  for (std::int64_t j = 0; j < c; ++j) max = std::max(max, static_cast<double>(value(x[j])));
  double sum = 0;
  for (std::int64_t j = 0; j < c; ++j) sum += std::exp(static_cast<double>(value(x[j])) - max);
  return max + std::log(sum);
}

// A vertex whose workers share `items` (rows or elements) with `worker(n)` cycles for n of them.
template <class WorkerCycles>
sim::Vertex shared_vertex(const std::string& codelet, std::int64_t items, const IpuMachine& m, WorkerCycles worker) {
  sim::Vertex v;
  v.codelet = codelet;
  v.supervisor_cycles = m.codelets.supervisor_cycles;
  v.worker_cycles = worker_split_cycles(items, m.chip.worker_contexts, worker);
  return v;
}

// A loss's row weights (Op::aux) by tile of its layout: the buffer, the rows it holds, and the rows the
// tile counts in the weights' sum. Empty without weights.
struct RowWeights {
  std::vector<sim::BufferId> buffer;
  std::vector<Range> held, counted;
  bool any() const { return !buffer.empty(); }
};

// The weights' buffers, one per tile beside the rows they scale, written by the host as the labels are.
RowWeights add_row_weights(OpProgram& out, const std::vector<Range>& held, const std::vector<Range>& counted) {
  RowWeights w{{}, held, counted};
  for (std::size_t t = 0; t < held.size(); ++t) {
    const auto tile = static_cast<sim::TileId>(t);
    const auto buffer = out.program.add_buffer("row weights (beside their rows)", tile, held[t].size() * kFloat32Bytes);
    w.buffer.push_back(buffer);
    out.aux.push_back({buffer, held[t].begin, held[t].size(), 0, 1});
  }
  return w;
}

// The weighted gradient's first supersteps: each tile's partial sum of the weights it counts, reduced
// to tile 0, whose total the last of them broadcasts to the other tiles. Returns, by tile, the buffer
// holding the total there.
std::vector<sim::BufferId> weight_sum_steps(const Op& op, OpProgram& out, const RowWeights& w, const IpuMachine& m) {
  sim::Superstep partial_step{"row weights' partial sums", {"Reduce (row weights)", {}}, {"none", {}}};
  std::map<std::int64_t, PartialBuffer> partials;
  const std::vector<PartialSlice> slices = loss_partials(op, m);
  for (const PartialSlice& slice : slices) {
    const auto ts = static_cast<std::size_t>(slice.tile);
    const auto tile = static_cast<sim::TileId>(slice.tile);
    const Range counted = w.counted[ts];
    const auto result = out.program.add_buffer("row weights' partial sum", tile, kFloat32Bytes);
    partials[slice.tile] = {result, 0};
    sim::Vertex v = shared_vertex(partial_step.compute.name, 1, m, [&](std::int64_t k) {
      return reduce_worker_cycles(k, counted.size(), m.codelets);
    });
    v.buffers = {{w.buffer[ts], (counted.begin - w.held[ts].begin) * kFloat32Bytes}, {result, 0}};
    v.execute = [n = counted.size()](const sim::VertexContext& ctx) {
      const auto* weight = ctx.as<const float>(0);
      double sum = 0;
      for (std::int64_t i = 0; i < n; ++i) sum += weight[i];
      ctx.as<float>(1)[0] = static_cast<float>(sum);
    };
    partial_step.compute.vertices.push_back({tile, std::move(v)});
    out.sram_read_bytes += counted.size() * kFloat32Bytes;
    out.sram_write_bytes += kFloat32Bytes;
  }
  const ReductionSchedule schedule = plan_reduction(slices, loss_sums_layout(1), false, m);
  const std::vector<TensorPiece> total = build_reduction(out, std::move(partial_step), partials, schedule, 1.0, m, DType::float32);
  std::vector<sim::BufferId> sum_of_tile(w.buffer.size(), total.front().buffer);  // tile 0 reads the total in place
  sim::TransferDestinations copies;
  for (std::size_t t = 1; t < sum_of_tile.size(); ++t) {
    sum_of_tile[t] = out.program.add_buffer("the weights' sum (copy)", static_cast<sim::TileId>(t), kFloat32Bytes);
    copies.push_back({sum_of_tile[t], 0});
  }
  sim::ExchangePlan& broadcast = out.program.steps.back().exchange;
  broadcast.name = "the weights' sum to every tile";
  if (!copies.empty()) broadcast.transfers.push_back({{total.front().buffer, 0}, kFloat32Bytes, copies});
  return sum_of_tile;
}

// One row block's weighted cross entropy (cross_entropy_steps): rows `r` of the logits and labels on
// the block's tile, their weights in `weights`; the gradient reads the weights' sum from `sum`.
void weighted_cross_entropy_vertex(const Op& op, const IpuMachine& m, OpProgram& out, std::int64_t t, Range r, sim::BufferId logits,
                                   sim::BufferId labels, sim::BufferId weights, sim::BufferId sum, sim::Superstep& compute,
                                   std::map<std::int64_t, PartialBuffer>& partials, std::vector<TensorPiece>& grads) {
  const std::int64_t C = op.shape.num_features;
  const bool gradient = op.kind == OpKind::loss_grad;
  const auto tile = static_cast<sim::TileId>(t);
  const auto result = out.program.add_buffer(gradient ? "gradient (row block)" : "partial weighted loss and weight sum", tile,
                                             gradient ? r.size() * C * m.value_bytes() : 2 * kPartialBytes);
  if (gradient) grads.push_back({result, r.begin, r.size(), 0, C});
  else partials[t] = {result, 0};
  sim::Vertex v = shared_vertex(compute.compute.name, r.size(), m, [&](std::int64_t n) {
    return weighted_loss_worker_cycles(op, n, m.codelets);
  });
  v.buffers = {{logits, 0}, {labels, 0}, {result, 0}, {weights, 0}};
  if (gradient) v.buffers.push_back({sum, 0});
  v.execute = with_value_storage(m.value_dtype, [&](auto storage) -> sim::VertexBody {
    using V = decltype(storage);
    return [n = r.size(), C, gradient](const sim::VertexContext& ctx) {
      const auto* x = ctx.as<const V>(0);
      const auto* label = ctx.as<const std::int32_t>(1);
      const auto* w = ctx.as<const float>(3);
      if (gradient) {
        auto* y = ctx.as<V>(2);
        const double total = ctx.as<const float>(4)[0];
        for (std::int64_t i = 0; i < n; ++i) {
          const V* row = x + i * C;
          const double lse = log_sum_exp(row, C);
          for (std::int64_t j = 0; j < C; ++j) {
            const double d = std::exp(static_cast<double>(value(row[j])) - lse) - (j == label[i] ? 1.0 : 0.0);
            // 0 where the weights sum to 0: an all-padding batch has no gradient, not 0 / 0.
            store(&y[i * C + j], total > 0 ? static_cast<float>(d * w[i] / total) : 0.0f);
          }
        }
        return;
      }
      auto* y = ctx.as<float>(2);
      double loss = 0, weight = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const V* row = x + i * C;
        loss += static_cast<double>(w[i]) * (log_sum_exp(row, C) - value(row[label[i]]));
        weight += w[i];
      }
      y[0] = static_cast<float>(loss);
      y[1] = static_cast<float>(weight);
    };
  });
  compute.compute.vertices.push_back({tile, std::move(v)});
  out.sram_read_bytes += r.size() * (C * m.value_bytes() + kIndexBytes + kFloat32Bytes) + (gradient ? kFloat32Bytes : 0);
  out.sram_write_bytes += gradient ? r.size() * C * m.value_bytes() : 2 * kPartialBytes;
}

// Cross entropy on row blocks: the logits' rows exchanged in, then each tile's rows' losses (summed into
// one partial) or gradients (exchanged back to the linear layout). With row weights `w`: each row's loss
// times its weight with the weights summed beside (two partials), or each row's gradient times
// w_r / sum w, the sum read from `weight_sum` (by tile).
void cross_entropy_steps(const Op& op, const IpuMachine& m, OpProgram& out, const LinearLayout& in,
                         const std::vector<sim::BufferId>& in_buf, sim::Superstep& operands, sim::Superstep& compute,
                         std::map<std::int64_t, PartialBuffer>& partials, const RowWeights& w,
                         const std::vector<sim::BufferId>& weight_sum) {
  const std::int64_t M = op.shape.num_inputs, C = op.shape.num_features;
  const bool gradient = op.kind == OpKind::loss_grad;
  const RowBlocks rows = loss_row_blocks(M, m);
  std::vector<TensorPiece> blocks, grads;
  for (std::int64_t t = 0; t < rows.tiles; ++t) {
    const Range r = rows.tile_rows(t);
    const auto tile = static_cast<sim::TileId>(t);
    const auto logits = out.program.add_buffer("logits (row block)", tile, r.size() * C * m.value_bytes());
    const auto labels = out.program.add_buffer("labels (row block)", tile, r.size() * kIndexBytes);
    blocks.push_back({logits, r.begin, r.size(), 0, C});
    out.indices.push_back({labels, r.begin, r.size(), 0, 1});
    if (w.any()) {
      const sim::BufferId sum = gradient ? weight_sum[static_cast<std::size_t>(t)] : -1;
      weighted_cross_entropy_vertex(op, m, out, t, r, logits, labels, w.buffer[static_cast<std::size_t>(t)], sum, compute, partials, grads);
      continue;
    }
    const auto result = out.program.add_buffer(gradient ? "gradient (row block)" : "partial loss", tile,
                                               gradient ? r.size() * C * m.value_bytes() : kPartialBytes);
    if (gradient) grads.push_back({result, r.begin, r.size(), 0, C});
    else partials[t] = {result, 0};
    sim::Vertex v = shared_vertex(compute.compute.name, r.size(), m, [&](std::int64_t n) {
      return cross_entropy_rows_worker_cycles(n, C, gradient, m.codelets);
    });
    v.buffers = {{logits, 0}, {labels, 0}, {result, 0}};
    v.execute = with_value_storage(m.value_dtype, [&](auto storage) -> sim::VertexBody {
      using V = decltype(storage);
      return [n = r.size(), C, M, gradient](const sim::VertexContext& ctx) {
        const auto* x = ctx.as<const V>(0);
        const auto* label = ctx.as<const std::int32_t>(1);
        double total = 0;
        for (std::int64_t i = 0; i < n; ++i) {
          const V* row = x + i * C;
          const double lse = log_sum_exp(row, C);
          if (!gradient) {
            total += lse - value(row[label[i]]);
            continue;
          }
          for (std::int64_t j = 0; j < C; ++j) {
            const double p = std::exp(static_cast<double>(value(row[j])) - lse);
            store(ctx.as<V>(2) + i * C + j, static_cast<float>((p - (j == label[i] ? 1.0 : 0.0)) / static_cast<double>(M)));
          }
        }
        if (!gradient) ctx.as<float>(2)[0] = static_cast<float>(total);
      };
    });
    compute.compute.vertices.push_back({tile, std::move(v)});
    out.sram_read_bytes += r.size() * (C * m.value_bytes() + kIndexBytes);
    out.sram_write_bytes += gradient ? r.size() * C * m.value_bytes() : kPartialBytes;
  }
  add_linear_transfers(out.program, operands.exchange, blocks, C, in, in_buf, m.value_bytes(), /*to_linear=*/false);
  if (gradient) {
    std::vector<TensorPiece> linear_out;
    const auto out_buf = add_linear_buffers(out.program, "out (linear)", in, m.value_bytes(), &linear_out);
    compute.exchange.name = "gradient to linear layout";
    add_linear_transfers(out.program, compute.exchange, grads, C, in, out_buf, m.value_bytes(), /*to_linear=*/true);
    out.output = std::move(linear_out);
  }
}

// Weighted mse on one tile of the linear layout (mse_step): elements `r`, the weights of the rows they
// touch in `w`'s buffer; the loss's two partials (sum w (x - t)^2, and the weights of the rows the tile
// counts) into `result`, or the gradient 2 w_r (x - t) / (C sum w) with the sum read from `sum`.
sim::Vertex weighted_mse_vertex(const Op& op, const IpuMachine& m, const std::string& codelet, Range r, const RowWeights& w,
                                std::size_t ts) {
  const std::int64_t C = op.shape.num_features;
  const bool gradient = op.kind == OpKind::loss_grad;
  sim::Vertex v = shared_vertex(codelet, r.size(), m, [&](std::int64_t n) { return weighted_loss_worker_cycles(op, n, m.codelets); });
  v.execute = with_value_storage(m.value_dtype, [&](auto storage) -> sim::VertexBody {
    using V = decltype(storage);
    return [n = r.size(), first = r.begin, C, gradient, held = w.held[ts], counted = w.counted[ts]](const sim::VertexContext& ctx) {
      const auto* x = ctx.as<const V>(0);
      const auto* target = ctx.as<const V>(1);
      const auto* weight = ctx.as<const float>(3);  // rows held.begin, ...
      const auto row_weight = [&](std::int64_t i) { return static_cast<double>(weight[(first + i) / C - held.begin]); };
      if (gradient) {
        auto* y = ctx.as<V>(2);
        const double divisor = static_cast<double>(C) * ctx.as<const float>(4)[0];
        for (std::int64_t i = 0; i < n; ++i) {
          const double d = static_cast<double>(value(x[i])) - value(target[i]);
          // 0 where the weights sum to 0: an all-padding batch has no gradient, not 0 / 0.
          store(&y[i], divisor > 0 ? static_cast<float>(2.0 * d * row_weight(i) / divisor) : 0.0f);
        }
        return;
      }
      auto* y = ctx.as<float>(2);
      double loss = 0, weights = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const double d = static_cast<double>(value(x[i])) - value(target[i]);
        loss += row_weight(i) * (d * d);
      }
      for (std::int64_t row = counted.begin; row < counted.end; ++row) weights += weight[row - held.begin];
      y[0] = static_cast<float>(loss);
      y[1] = static_cast<float>(weights);
    };
  });
  return v;
}

// Mean squared error where predictions and targets lie: each tile's squared errors summed into one
// partial, or its gradients in place; with row weights `w`, weighted as weighted_mse_vertex says.
void mse_step(const Op& op, const IpuMachine& m, OpProgram& out, const LinearLayout& in, const std::vector<sim::BufferId>& in_buf,
              sim::Superstep& compute, std::map<std::int64_t, PartialBuffer>& partials, const RowWeights& w,
              const std::vector<sim::BufferId>& weight_sum) {
  const bool gradient = op.kind == OpKind::loss_grad;
  const double n_all = static_cast<double>(in.elements);
  const std::int64_t vb = m.value_bytes();
  const auto targets = add_linear_buffers(out.program, "targets (linear)", in, vb, &out.weight);
  std::vector<sim::BufferId> out_buf;
  if (gradient) out_buf = add_linear_buffers(out.program, "out (linear)", in, vb, &out.output);
  for (std::int64_t t = 0; t < in.tiles_used; ++t) {
    const Range r = in.tile_range(t);
    const auto ts = static_cast<std::size_t>(t);
    const auto tile = static_cast<sim::TileId>(t);
    if (w.any()) {
      const sim::BufferId result =
          gradient ? out_buf[ts] : out.program.add_buffer("partial weighted loss and weight sum", tile, 2 * kPartialBytes);
      if (!gradient) partials[t] = {result, 0};
      sim::Vertex v = weighted_mse_vertex(op, m, compute.compute.name, r, w, ts);
      v.buffers = {{in_buf[ts], 0}, {targets[ts], 0}, {result, 0}, {w.buffer[ts], 0}};
      if (gradient) v.buffers.push_back({weight_sum[ts], 0});
      compute.compute.vertices.push_back({tile, std::move(v)});
      out.sram_read_bytes += 2 * r.size() * vb + w.held[ts].size() * kFloat32Bytes + (gradient ? kFloat32Bytes : 0);
      out.sram_write_bytes += gradient ? r.size() * vb : 2 * kPartialBytes;
      continue;
    }
    sim::BufferId result = gradient ? out_buf[ts] : out.program.add_buffer("partial loss", tile, kPartialBytes);
    if (!gradient) partials[t] = {result, 0};
    sim::Vertex v = shared_vertex(compute.compute.name, r.size(), m, [&](std::int64_t n) {
      return mse_worker_cycles(n, gradient, m.codelets);
    });
    v.buffers = {{in_buf[ts], 0}, {targets[ts], 0}, {result, 0}};
    v.execute = with_value_storage(m.value_dtype, [&](auto storage) -> sim::VertexBody {
      using V = decltype(storage);
      return [n = r.size(), n_all, gradient](const sim::VertexContext& ctx) {
        const auto* x = ctx.as<const V>(0);
        const auto* target = ctx.as<const V>(1);
        double total = 0;
        for (std::int64_t i = 0; i < n; ++i) {
          const double d = static_cast<double>(value(x[i])) - value(target[i]);
          if (gradient) store(ctx.as<V>(2) + i, static_cast<float>(2.0 * d / n_all));
          else total += d * d;
        }
        if (!gradient) ctx.as<float>(2)[0] = static_cast<float>(total);
      };
    });
    compute.compute.vertices.push_back({tile, std::move(v)});
    out.sram_read_bytes += 2 * r.size() * vb;
    out.sram_write_bytes += gradient ? r.size() * vb : kPartialBytes;
  }
}

// The weighted loss's last step, on tile 0: its two sums [sum w l, sum w] (in `sums`) to the output
// sum w l / (cols_per_term sum w), cols_per_term 1 for cross entropy and C for mse; 0 where the weights
// sum to 0 (an all-padding batch), not 0 / 0.
sim::Superstep weighted_mean_step(sim::BufferId sums, std::int64_t cols_per_term, OpProgram& out, const IpuMachine& m) {
  sim::Superstep step{"weighted mean", {"WeightedMean", {}}, {"none", {}}};
  const auto result = out.program.add_buffer("out (linear)", 0, m.value_bytes());
  sim::Vertex v = shared_vertex(step.compute.name, 1, m, [&](std::int64_t) { return weighted_mean_worker_cycles(m.codelets); });
  v.buffers = {{sums, 0}, {result, 0}};
  v.execute = with_value_storage(m.value_dtype, [&](auto storage) -> sim::VertexBody {
    using V = decltype(storage);
    return [cols_per_term](const sim::VertexContext& ctx) {
      const auto* sum = ctx.as<const float>(0);
      const double divisor = static_cast<double>(cols_per_term) * sum[1];
      store(ctx.as<V>(1), divisor > 0 ? static_cast<float>(sum[0] / divisor) : 0.0f);
    };
  });
  step.compute.vertices.push_back({0, std::move(v)});
  out.sram_read_bytes += 2 * kPartialBytes;
  out.sram_write_bytes += m.value_bytes();
  out.output = {{result, 0, 1, 0, 1}};
  return step;
}

}  // namespace

OpProgram build_loss_program(const Op& op, const OpPlan& plan, const IpuMachine& machine, sim::Mode mode) {
  (void)plan;  // the layouts and the reduction schedule follow from the shape, as the planner costed them
  const std::int64_t M = op.shape.num_inputs, C = op.shape.num_features;
  const bool gradient = op.kind == OpKind::loss_grad, ce = op.loss == LossFn::cross_entropy, weighted = op.loss_row_weights() >= 0;
  require_value_dtype(op, machine);
  const LinearLayout in = linear_layout(M * C, machine.value_bytes(), machine);
  OpProgram out;
  out.program.name = op.name;
  set_program_mode(out.program, machine, mode);
  const auto in_buf = add_linear_buffers(out.program, "predictions (linear)", in, machine.value_bytes(), &out.input);
  out.input_width = 1;
  out.output_width = 1;
  sim::Superstep operands{"operands", {"none", {}}, {"logits' rows to row blocks", {}}};
  const std::string codelet = ce ? (gradient ? "CrossEntropyGrad" : "CrossEntropy") : (gradient ? "MseGrad" : "Mse");
  sim::Superstep compute{"loss", {codelet, {}}, {"none", {}}};
  std::map<std::int64_t, PartialBuffer> partials;
  RowWeights w;
  std::vector<sim::BufferId> weight_sum;
  if (weighted) {
    std::vector<Range> held, counted;
    const RowBlocks rows = loss_row_blocks(M, machine);
    for (std::int64_t t = 0; t < (ce ? rows.tiles : in.tiles_used); ++t) {
      held.push_back(ce ? rows.tile_rows(t) : rows_touched(in.tile_range(t), C));
      counted.push_back(ce ? rows.tile_rows(t) : rows_starting(in.tile_range(t), C));
    }
    w = add_row_weights(out, held, counted);
    if (gradient) weight_sum = weight_sum_steps(op, out, w, machine);
  }
  if (ce) {
    cross_entropy_steps(op, machine, out, in, in_buf, operands, compute, partials, w, weight_sum);
    if (weighted && gradient) {
      // The logits' rows travel in the exchange that broadcasts the weights' sum.
      sim::ExchangePlan& last = out.program.steps.back().exchange;
      last.name = "the weights' sum to every tile, logits' rows to row blocks";
      last.append(std::move(operands.exchange));
    } else {
      out.program.steps.push_back(std::move(operands));
    }
  } else {
    mse_step(op, machine, out, in, in_buf, compute, partials, w, weight_sum);
  }
  if (gradient) {
    out.program.steps.push_back(std::move(compute));
  } else if (!weighted) {
    const ReductionSchedule schedule =
        plan_reduction(loss_partials(op, machine), linear_layout(1, machine.value_bytes(), machine), true, machine);
    out.output = build_reduction(out, std::move(compute), partials, schedule, ce ? static_cast<double>(M) : static_cast<double>(M * C),
                                 machine, machine.value_dtype);
  } else {
    const ReductionSchedule schedule = plan_reduction(loss_partials(op, machine), loss_sums_layout(2), false, machine);
    const std::vector<TensorPiece> sums = build_reduction(out, std::move(compute), partials, schedule, 1.0, machine, DType::float32);
    out.program.steps.push_back(weighted_mean_step(sums.front().buffer, ce ? 1 : C, out, machine));
  }
  append_loop_control(out.program, machine);
  return out;
}

}  // namespace tilesim::ipu
