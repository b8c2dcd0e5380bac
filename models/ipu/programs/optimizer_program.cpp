// optimizer_step as a BSP program: every tile of the parameter's linear layout updates the elements it
// holds, reading its gradient (the same layout: the gradient is an earlier op's output of P elements)
// and its optimizer state, which lives beside the parameter (PopTorch maps each state tensor like its
// parameter, so no exchange brings it), and writing the updated parameter and state rows in place of
// the output's pieces. Adam first broadcasts its step number from tile 0 to the other tiles.
#include <cmath>
#include <string>
#include <vector>

#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/machine/training_codelet_costs.hpp"
#include "models/ipu/planning/linear_layout.hpp"
#include "models/ipu/programs/linear_buffers.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "models/ipu/programs/value_storage.hpp"

namespace tilesim::ipu {

namespace {

// torch.optim's update of n elements (ir/op_graph.hpp, OptimizerSpec), per element in double from the
// operands (values of storage type V, value_storage.hpp) and rounded once into V, as the reference
// computes it: p, g, the state rows (n apart) in; the parameter row, then the state rows (n apart) out.
template <class V>
void update(const OptimizerSpec& spec, double t, std::int64_t n, const V* p, const V* g, const V* state, V* out) {
  const double wd = spec.weight_decay, lr = spec.lr;
  const auto put = [](V* at, double x) { store(at, static_cast<float>(x)); };
  for (std::int64_t i = 0; i < n; ++i) {
    const double pi = value(p[i]), gi = static_cast<double>(value(g[i])) + wd * pi;
    if (spec.kind == OptimizerSpec::Kind::sgd) {
      if (spec.momentum == 0) {
        put(&out[i], pi - lr * gi);
        continue;
      }
      const double b = spec.momentum * value(state[i]) + gi;
      put(&out[i], pi - lr * b);
      put(&out[n + i], b);
      continue;
    }
    const double m = spec.beta1 * value(state[i]) + (1 - spec.beta1) * gi;
    const double v = spec.beta2 * value(state[n + i]) + (1 - spec.beta2) * gi * gi;
    const double bc1 = 1 - std::pow(spec.beta1, t), bc2 = 1 - std::pow(spec.beta2, t);
    put(&out[i], pi - (lr / bc1) * m / (std::sqrt(v) / std::sqrt(bc2) + spec.eps));
    put(&out[n + i], m);
    put(&out[2 * n + i], v);
  }
}

}  // namespace

OpProgram build_optimizer_program(const Op& op, const OpPlan& plan, const IpuMachine& machine) {
  (void)plan;  // the parameter's linear layout is the plan
  const std::int64_t parameter_elements = op.shape.num_inputs * op.shape.num_features, state_rows = op.optimizer.state_rows();
  const bool adam = op.optimizer.kind == OptimizerSpec::Kind::adam;
  require_value_dtype(op, machine);
  // Parameter, gradient and state of the op's type; Adam's step number is float32 whatever it is.
  const std::int64_t vb = machine.value_bytes();
  const LinearLayout layout = linear_layout(parameter_elements, vb, machine);
  OpProgram out;
  out.program.name = op.name;
  const auto param = add_linear_buffers(out.program, "parameter (linear)", layout, vb, &out.input);
  const auto grad = add_linear_buffers(out.program, "gradient (linear)", layout, vb, &out.weight);
  out.input_width = 1;
  out.bias_width = parameter_elements;
  out.output_width = parameter_elements;

  sim::Superstep operands{"operands", {"none", {}}, {"step number to the parameter's tiles", {}}};
  std::vector<sim::BufferId> step(static_cast<std::size_t>(layout.tiles_used), -1);
  if (adam) {
    step[0] = out.program.add_buffer("step number", 0, kFloat32Bytes);
    out.aux.push_back({step[0], 0, 1, 0, 1});
    sim::TransferDestinations copies;
    for (std::int64_t t = 1; t < layout.tiles_used; ++t) {
      step[static_cast<std::size_t>(t)] = out.program.add_buffer("step number (copy)", static_cast<sim::TileId>(t), kFloat32Bytes);
      copies.push_back({step[static_cast<std::size_t>(t)], 0});
    }
    if (!copies.empty()) operands.exchange.transfers.push_back({{step[0], 0}, kFloat32Bytes, copies});
  }

  sim::Superstep compute{"update", {to_string(op.optimizer.kind) + " update", {}}, {"none", {}}};
  for (std::int64_t t = 0; t < layout.tiles_used; ++t) {
    const Range r = layout.tile_range(t);
    const auto ts = static_cast<std::size_t>(t);
    const auto tile = static_cast<sim::TileId>(t);
    const std::int64_t n = r.size();
    sim::BufferId state = -1;
    if (state_rows > 0) {
      state = out.program.add_buffer("optimizer state (beside the parameter)", tile, state_rows * n * vb);
      out.bias.push_back({state, 0, state_rows, r.begin, n});
    }
    const auto result = out.program.add_buffer("updated parameter and state", tile, (1 + state_rows) * n * vb);
    out.output.push_back({result, 0, 1 + state_rows, r.begin, n});
    sim::Vertex v;
    v.codelet = compute.compute.name;
    v.supervisor_cycles = machine.codelets.supervisor_cycles;
    v.worker_cycles = worker_split_cycles(n, machine.chip.worker_contexts, [&](std::int64_t k) {
      return optimizer_worker_cycles(op.optimizer, k, machine.codelets);
    });
    v.buffers = {{param[ts], 0}, {grad[ts], 0}, {result, 0}};
    if (state_rows > 0) v.buffers.push_back({state, 0});
    if (adam) v.buffers.push_back({step[ts], 0});
    v.execute = with_value_storage(machine.value_dtype, [&](auto storage) -> sim::VertexBody {
      using V = decltype(storage);
      return [spec = op.optimizer, n, state_rows, adam](const sim::VertexContext& ctx) {
        const V* st = state_rows > 0 ? ctx.as<const V>(3) : nullptr;
        const double t = adam ? static_cast<double>(ctx.as<const float>(state_rows > 0 ? 4 : 3)[0]) : 0.0;
        update<V>(spec, t, n, ctx.as<const V>(0), ctx.as<const V>(1), st, ctx.as<V>(2));
      };
    });
    compute.compute.vertices.push_back({tile, std::move(v)});
    out.sram_read_bytes += (2 + state_rows) * n * vb;
    out.sram_write_bytes += (1 + state_rows) * n * vb;
  }
  if (!operands.exchange.transfers.empty()) out.program.steps.push_back(std::move(operands));
  out.program.steps.push_back(std::move(compute));
  append_loop_control(out.program, machine);
  return out;
}

}  // namespace tilesim::ipu
