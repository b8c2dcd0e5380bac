// cast (a half training step's conversions: master weights to the model's type, predictions to float32
// for the loss, scaled gradients back to float32) as a BSP program on the output's linear layout. Each
// tile converts the elements it holds; the input, in the linear layout at its own element size, is read
// in place where that layout gives the tile the same range (large tensors, spread over every tile
// either way), and otherwise the tile's range is exchanged to it first.
#include <string>
#include <vector>

#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/planning/blocks.hpp"
#include "models/ipu/programs/linear_buffers.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "models/ipu/programs/value_storage.hpp"

namespace tilesim::ipu {

namespace {

// Tile t's Cast vertex: `n` values of type In at `in` to type Out at `out`, times `scale`, rounded once.
sim::Vertex cast_vertex(const Op& op, std::int64_t n, sim::BufferRef in, sim::BufferId out, const IpuMachine& machine) {
  sim::Vertex v;
  v.codelet = "Cast " + to_string(op.input_dtype) + " -> " + to_string(op.dtype);
  v.supervisor_cycles = machine.codelets.supervisor_cycles;
  v.worker_cycles = worker_split_cycles(n, machine.chip.worker_contexts, [&](std::int64_t k) {
    return cast_worker_cycles(op.input_dtype, op.dtype, op.cast_scale() != 1.0f, k, machine.codelets);
  });
  v.buffers = {in, {out, 0}};
  v.execute = with_value_storage(op.input_dtype, [&](auto in_storage) -> sim::VertexBody {
    return with_value_storage(op.dtype, [&](auto out_storage) -> sim::VertexBody {
      using In = decltype(in_storage);
      using Out = decltype(out_storage);
      return [n, scale = op.cast_scale()](const sim::VertexContext& ctx) {
        const auto* x = ctx.as<const In>(0);
        auto* y = ctx.as<Out>(1);
        for (std::int64_t e = 0; e < n; ++e) store(&y[e], scale * value(x[e]));
      };
    });
  });
  return v;
}

}  // namespace

OpProgram build_cast_program(const Op& op, const OpPlan& plan, const IpuMachine& machine) {
  (void)plan;  // the output's linear layout is the plan
  require_value_dtype(op, machine);
  const std::int64_t elements = op.shape.num_inputs * op.shape.num_features;
  const std::int64_t in_bytes = dtype_bytes(op.input_dtype), out_bytes = machine.value_bytes();
  const LinearLayout in = linear_layout(elements, in_bytes, machine), out_layout = linear_layout(elements, out_bytes, machine);
  OpProgram out;
  out.program.name = op.name;
  const auto in_buf = add_linear_buffers(out.program, "input (linear)", in, in_bytes, &out.input);
  const auto out_buf = add_linear_buffers(out.program, "out (linear)", out_layout, out_bytes, &out.output);
  out.input_width = 1;
  out.output_width = 1;

  sim::Superstep operands{"operands", {"none", {}}, {"input to the output's layout", {}}};
  sim::Superstep compute{"compute", {"Cast", {}}, {"none", {}}};
  for (std::int64_t t = 0; t < out_layout.tiles_used; ++t) {
    const Range r = out_layout.tile_range(t);
    const auto ts = static_cast<std::size_t>(t);
    sim::BufferRef source{-1, 0};
    if (t < in.tiles_used && in.tile_range(t).begin == r.begin && in.tile_range(t).end == r.end) {
      source = {in_buf[ts], 0};
    } else {
      const auto received = out.program.add_buffer("input (received)", static_cast<sim::TileId>(t), r.size() * in_bytes);
      broadcast_from_linear(out.program, operands.exchange, {received, r.begin, r.size(), 0, 1}, {}, 1, in, in_buf, in_bytes);
      source = {received, 0};
    }
    compute.compute.vertices.push_back({static_cast<sim::TileId>(t), cast_vertex(op, r.size(), source, out_buf[ts], machine)});
    out.sram_read_bytes += r.size() * in_bytes;
    out.sram_write_bytes += r.size() * out_bytes;
  }
  if (!operands.exchange.transfers.empty()) out.program.steps.push_back(std::move(operands));
  out.program.steps.push_back(std::move(compute));
  append_loop_control(out.program, machine);
  return out;
}

}  // namespace tilesim::ipu
