// loss and loss_grad as BSP programs (planning/training_plan.hpp says what each step does). Cross
// entropy needs whole rows on a tile for its row max and log-sum-exp, so the logits first move from
// the linear layout onto row blocks (labels are written there directly: they are graph inputs); mse
// works where its operands lie. The loss is each tile's sum of losses, reduced across tiles into the
// one output on tile 0 and divided there by the number of terms (programs/reduction_program.hpp).
// Values follow the reference (in double from the float32 operands, rounded once per stored result).
#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/machine/training_codelet_costs.hpp"
#include "models/ipu/planning/training_plan.hpp"
#include "models/ipu/programs/linear_buffers.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "models/ipu/programs/reduction_program.hpp"

namespace tilesim::ipu {

namespace {

// One row's log-sum-exp, in double.
double log_sum_exp(const float* x, std::int64_t c) {
  double max = -INFINITY;
  for (std::int64_t j = 0; j < c; ++j) max = std::max(max, static_cast<double>(x[j]));
  double sum = 0;
  for (std::int64_t j = 0; j < c; ++j) sum += std::exp(static_cast<double>(x[j]) - max);
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

// Cross entropy on row blocks: the logits' rows exchanged in, then each tile's rows' losses (summed into
// one partial) or gradients (exchanged back to the linear layout).
void cross_entropy_steps(const Op& op, const IpuMachine& m, OpProgram& out, const LinearLayout& in,
                         const std::vector<sim::BufferId>& in_buf, sim::Superstep& operands, sim::Superstep& compute,
                         std::map<std::int64_t, PartialBuffer>& partials) {
  const std::int64_t M = op.shape.num_inputs, C = op.shape.num_features;
  const bool gradient = op.kind == OpKind::loss_grad;
  const RowBlocks rows = loss_row_blocks(M, m);
  std::vector<TensorPiece> blocks, grads;
  for (std::int64_t t = 0; t < rows.tiles; ++t) {
    const Range r = rows.tile_rows(t);
    const auto tile = static_cast<sim::TileId>(t);
    const auto logits = out.program.add_buffer("logits (row block)", tile, r.size() * C * kValueBytes);
    const auto labels = out.program.add_buffer("labels (row block)", tile, r.size() * kIndexBytes);
    blocks.push_back({logits, r.begin, r.size(), 0, C});
    out.indices.push_back({labels, r.begin, r.size(), 0, 1});
    const auto result = out.program.add_buffer(gradient ? "gradient (row block)" : "partial loss", tile,
                                               (gradient ? r.size() * C : 1) * kValueBytes);
    if (gradient) grads.push_back({result, r.begin, r.size(), 0, C});
    else partials[t] = {result, 0};
    sim::Vertex v = shared_vertex(compute.compute.name, r.size(), m, [&](std::int64_t n) {
      return cross_entropy_rows_worker_cycles(n, C, gradient, m.codelets);
    });
    v.buffers = {{logits, 0}, {labels, 0}, {result, 0}};
    v.execute = [n = r.size(), C, M, gradient](const sim::VertexContext& ctx) {
      const auto* x = ctx.as<const float>(0);
      const auto* label = ctx.as<const std::int32_t>(1);
      auto* y = ctx.as<float>(2);
      double total = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const float* row = x + i * C;
        const double lse = log_sum_exp(row, C);
        if (!gradient) {
          total += lse - row[label[i]];
          continue;
        }
        for (std::int64_t j = 0; j < C; ++j) {
          const double p = std::exp(static_cast<double>(row[j]) - lse);
          y[i * C + j] = static_cast<float>((p - (j == label[i] ? 1.0 : 0.0)) / static_cast<double>(M));
        }
      }
      if (!gradient) y[0] = static_cast<float>(total);
    };
    compute.compute.vertices.push_back({tile, std::move(v)});
    out.sram_read_bytes += r.size() * (C * kValueBytes + kIndexBytes);
    out.sram_write_bytes += (gradient ? r.size() * C : 1) * kValueBytes;
  }
  add_linear_transfers(operands.exchange, blocks, C, in, in_buf, kValueBytes, /*to_linear=*/false);
  if (gradient) {
    std::vector<TensorPiece> linear_out;
    const auto out_buf = add_linear_buffers(out.program, "out (linear)", in, kValueBytes, &linear_out);
    compute.exchange.name = "gradient to linear layout";
    add_linear_transfers(compute.exchange, grads, C, in, out_buf, kValueBytes, /*to_linear=*/true);
    out.output = std::move(linear_out);
  }
}

// Mean squared error where predictions and targets lie: each tile's squared errors summed into one
// partial, or its gradients in place.
void mse_step(const Op& op, const IpuMachine& m, OpProgram& out, const LinearLayout& in, const std::vector<sim::BufferId>& in_buf,
              sim::Superstep& compute, std::map<std::int64_t, PartialBuffer>& partials) {
  const bool gradient = op.kind == OpKind::loss_grad;
  const double n_all = static_cast<double>(in.elements);
  const auto targets = add_linear_buffers(out.program, "targets (linear)", in, kValueBytes, &out.weight);
  std::vector<sim::BufferId> out_buf;
  if (gradient) out_buf = add_linear_buffers(out.program, "out (linear)", in, kValueBytes, &out.output);
  for (std::int64_t t = 0; t < in.tiles_used; ++t) {
    const Range r = in.tile_range(t);
    const auto ts = static_cast<std::size_t>(t);
    const auto tile = static_cast<sim::TileId>(t);
    sim::BufferId result = gradient ? out_buf[ts] : out.program.add_buffer("partial loss", tile, kValueBytes);
    if (!gradient) partials[t] = {result, 0};
    sim::Vertex v = shared_vertex(compute.compute.name, r.size(), m, [&](std::int64_t n) {
      return mse_worker_cycles(n, gradient, m.codelets);
    });
    v.buffers = {{in_buf[ts], 0}, {targets[ts], 0}, {result, 0}};
    v.execute = [n = r.size(), n_all, gradient](const sim::VertexContext& ctx) {
      const auto* x = ctx.as<const float>(0);
      const auto* target = ctx.as<const float>(1);
      auto* y = ctx.as<float>(2);
      double total = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const double d = static_cast<double>(x[i]) - target[i];
        if (gradient) y[i] = static_cast<float>(2.0 * d / n_all);
        else total += d * d;
      }
      if (!gradient) y[0] = static_cast<float>(total);
    };
    compute.compute.vertices.push_back({tile, std::move(v)});
    out.sram_read_bytes += 2 * r.size() * kValueBytes;
    out.sram_write_bytes += (gradient ? r.size() : 1) * kValueBytes;
  }
}

}  // namespace

OpProgram build_loss_program(const Op& op, const OpPlan& plan, const IpuMachine& machine) {
  (void)plan;  // the layouts and the reduction schedule follow from the shape, as the planner costed them
  const std::int64_t M = op.shape.num_inputs, C = op.shape.num_features;
  const bool gradient = op.kind == OpKind::loss_grad, ce = op.loss == LossFn::cross_entropy;
  const LinearLayout in = linear_layout(M * C, kValueBytes, machine);
  OpProgram out;
  out.program.name = op.name;
  const auto in_buf = add_linear_buffers(out.program, "predictions (linear)", in, kValueBytes, &out.input);
  out.input_width = 1;
  out.output_width = 1;
  sim::Superstep operands{"operands", {"none", {}}, {"logits' rows to row blocks", {}}};
  const std::string codelet = ce ? (gradient ? "CrossEntropyGrad" : "CrossEntropy") : (gradient ? "MseGrad" : "Mse");
  sim::Superstep compute{"loss", {codelet, {}}, {"none", {}}};
  std::map<std::int64_t, PartialBuffer> partials;
  if (ce) {
    cross_entropy_steps(op, machine, out, in, in_buf, operands, compute, partials);
    out.program.steps.push_back(std::move(operands));
  } else {
    mse_step(op, machine, out, in, in_buf, compute, partials);
  }
  if (gradient) {
    out.program.steps.push_back(std::move(compute));
  } else {
    const ReductionSchedule schedule = plan_reduction(loss_partials(op, machine), linear_layout(1, kValueBytes, machine), true, machine);
    out.output = build_reduction(out, std::move(compute), partials, schedule, ce ? static_cast<double>(M) : static_cast<double>(M * C),
                                 machine);
  }
  append_loop_control(out.program, machine);
  return out;
}

}  // namespace tilesim::ipu
