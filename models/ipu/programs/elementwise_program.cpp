// unary, binary and unary_grad elementwise ops as BSP programs, mapped where their operands live: the
// input and the output share the linear layout, so each tile computes the elements it holds and nothing
// moves, except a binary's `other` when it is not the input's shape (a per-row scalar, a per-head value,
// a bias row): the piece of `other` each tile's rows need is broadcast to it first (one transfer per
// piece, to every tile needing it), in a superstep of its own before the compute. unary_grad's gradient
// has the input's shape, so it is read where it lives, like a same-shape `other`.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "ir/reference/reference.hpp"
#include "ir/reference/training_reference.hpp"
#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/machine/training_codelet_costs.hpp"
#include "models/ipu/planning/blocks.hpp"
#include "models/ipu/programs/linear_buffers.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "models/ipu/programs/value_storage.hpp"

namespace tilesim::ipu {

namespace {

// The functions as the reference defines them, in double, rounded once: the simulated IPU's values are
// checked against the reference, and a correctly rounded result passes any bound it states.
float apply_unary(UnaryFn fn, float scalar, float x) {
  return static_cast<float>(reference::unary_exact(fn, scalar, x));
}

// g * f'(x) as the reference defines it, in double, rounded once.
float apply_unary_grad(UnaryFn fn, float scalar, float x, float g) {
  return static_cast<float>(static_cast<double>(g) * reference::training::unary_derivative(fn, scalar, x));
}

float apply_binary(BinaryFn fn, float a, float b) {
  switch (fn) {
    case BinaryFn::add: return a + b;
    case BinaryFn::subtract: return a - b;
    case BinaryFn::multiply: return a * b;
    case BinaryFn::divide: return a / b;
    case BinaryFn::equal: return a == b ? 1.0f : 0.0f;
  }
  return a;
}

// Where each tile's elements find a binary op's `other`: the tile's buffer holding it and the flat
// index (in `other`) of that buffer's first element.
struct OtherOperand {
  std::vector<sim::BufferId> buffer;
  std::vector<std::int64_t> first;
};

// `other` in the linear layout, and where each tile of `layout` reads it: in place when it has the
// input's shape (the same layout); otherwise each tile gets a copy of the flat range [first, last) its
// elements need, tiles needing the same range sharing one broadcast in `exchange`.
OtherOperand place_other(const Op& op, const LinearLayout& layout, const IpuMachine& machine, OpProgram& out,
                         sim::ExchangePlan& exchange) {
  const std::int64_t F = op.shape.num_features, other_rows = op.shape.other_rows, groups = op.shape.other_groups;
  const std::int64_t other_elements = other_rows * groups;
  const std::int64_t vb = machine.value_bytes();
  const LinearLayout other_layout = linear_layout(other_elements, vb, machine);
  const auto other_buf = add_linear_buffers(out.program, "other (linear)", other_layout, vb, &out.weight);
  OtherOperand other{std::vector<sim::BufferId>(static_cast<std::size_t>(layout.tiles_used), -1),
                     std::vector<std::int64_t>(static_cast<std::size_t>(layout.tiles_used), 0)};
  if (other_elements == op.shape.num_inputs * F) {
    other.buffer = other_buf;
    for (std::int64_t t = 0; t < layout.tiles_used; ++t) other.first[static_cast<std::size_t>(t)] = layout.tile_range(t).begin;
    return other;
  }
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<sim::BufferId>> needers;
  for (std::int64_t t = 0; t < layout.tiles_used; ++t) {
    const Range r = layout.tile_range(t);
    const std::int64_t first_row = r.begin / F, last_row = (r.end - 1) / F;
    const std::int64_t first = other_rows == 1 ? 0 : first_row * groups;
    const std::int64_t last = other_rows == 1 ? groups : (last_row + 1) * groups;
    const auto b = out.program.add_buffer("other (needed)", static_cast<sim::TileId>(t), (last - first) * vb);
    other.buffer[static_cast<std::size_t>(t)] = b;
    other.first[static_cast<std::size_t>(t)] = first;
    needers[{first, last}].push_back(b);
  }
  for (const auto& [range, buffers] : needers) {
    // The range as a 1-wide tensor piece: cut at the linear tiles of `other`, broadcast to every needer.
    const std::vector<sim::BufferId> copies(buffers.begin() + 1, buffers.end());
    broadcast_from_linear(out.program, exchange, {buffers.front(), range.first, range.second - range.first, 0, 1}, copies, 1, other_layout,
                          other_buf, vb);
  }
  return other;
}

// The vertex computing tile t's elements `r` of the output; its workers split them.
sim::Vertex elementwise_vertex(const Op& op, const std::string& codelet, Range r, const IpuMachine& machine,
                               sim::BufferId in, sim::BufferId out, sim::BufferId other, std::int64_t other_first) {
  const auto& costs = machine.codelets;
  const bool binary = op.kind == OpKind::binary;
  const std::int64_t n = r.size();
  sim::Vertex v;
  v.codelet = codelet;
  v.supervisor_cycles = costs.supervisor_cycles;
  v.worker_cycles = worker_split_cycles(n, machine.chip.worker_contexts, [&](std::int64_t k) {
    if (op.kind == OpKind::unary_grad) return unary_grad_worker_cycles(op.unary, k, costs);
    return binary ? binary_worker_cycles(op.binary, k, costs) : unary_worker_cycles(op.unary, k, costs);
  });
  if (op.kind == OpKind::unary_grad) {
    v.buffers = {{in, 0}, {other, 0}, {out, 0}};
    v.execute = with_value_storage(machine.value_dtype, [&](auto storage) -> sim::VertexBody {
      using V = decltype(storage);
      return [n, fn = op.unary, scalar = op.scalar](const sim::VertexContext& ctx) {
        const auto* x = ctx.as<const V>(0);
        const auto* g = ctx.as<const V>(1);
        auto* y = ctx.as<V>(2);
        for (std::int64_t e = 0; e < n; ++e) store(&y[e], apply_unary_grad(fn, scalar, value(x[e]), value(g[e])));
      };
    });
    return v;
  }
  if (!binary) {
    v.buffers = {{in, 0}, {out, 0}};
    v.execute = with_value_storage(machine.value_dtype, [&](auto storage) -> sim::VertexBody {
      using V = decltype(storage);
      return [n, fn = op.unary, scalar = op.scalar](const sim::VertexContext& ctx) {
        const auto* a = ctx.as<const V>(0);
        auto* y = ctx.as<V>(1);
        for (std::int64_t e = 0; e < n; ++e) store(&y[e], apply_unary(fn, scalar, value(a[e])));
      };
    });
    return v;
  }
  v.buffers = {{in, 0}, {other, 0}, {out, 0}};
  v.execute = with_value_storage(machine.value_dtype, [&](auto storage) -> sim::VertexBody {
    using V = decltype(storage);
    return [begin = r.begin, n, F = op.shape.num_features, other_rows = op.shape.other_rows, groups = op.shape.other_groups,
            first = other_first, fn = op.binary](const sim::VertexContext& ctx) {
      const auto* a = ctx.as<const V>(0);
      const auto* b = ctx.as<const V>(1);
      auto* y = ctx.as<V>(2);
      const std::int64_t per_group = F / groups;
      for (std::int64_t e = 0; e < n; ++e) {
        const std::int64_t flat = begin + e, row = flat / F, col = flat % F;
        const std::int64_t o = (other_rows == 1 ? 0 : row) * groups + col / per_group;
        store(&y[e], apply_binary(fn, value(a[e]), value(b[o - first])));
      }
    };
  });
  return v;
}

}  // namespace

OpProgram build_elementwise_program(const Op& op, const OpPlan& plan, const IpuMachine& machine) {
  (void)plan;  // the linear layout is the plan
  require_value_dtype(op, machine);
  const std::int64_t vb = machine.value_bytes();
  const LinearLayout layout = linear_layout(op.shape.num_inputs * op.shape.num_features, vb, machine);
  OpProgram out;
  out.program.name = op.name;
  const auto in_buf = add_linear_buffers(out.program, "input (linear)", layout, vb, &out.input);
  const auto out_buf = add_linear_buffers(out.program, "out (linear)", layout, vb, &out.output);
  out.input_width = 1;
  out.output_width = 1;

  const bool binary = op.kind == OpKind::binary, grad = op.kind == OpKind::unary_grad;
  sim::Superstep operands{"operands", {"none", {}}, {"broadcast operand to the tiles that need it", {}}};
  OtherOperand other;
  if (binary) other = place_other(op, layout, machine, out, operands.exchange);
  if (grad) {
    other.buffer = add_linear_buffers(out.program, "grad (linear)", layout, vb, &out.weight);
    for (std::int64_t t = 0; t < layout.tiles_used; ++t) other.first.push_back(layout.tile_range(t).begin);
  }
  const std::string codelet = binary ? "BinaryOp " + to_string(op.binary)
                                     : (grad ? "UnaryGrad " : "UnaryOp ") + to_string(op.unary);
  sim::Superstep compute{"compute", {codelet, {}}, {"none", {}}};
  for (std::int64_t t = 0; t < layout.tiles_used; ++t) {
    const Range r = layout.tile_range(t);
    const auto ts = static_cast<std::size_t>(t);
    compute.compute.vertices.push_back({static_cast<sim::TileId>(t),
                                        elementwise_vertex(op, compute.compute.name, r, machine, in_buf[ts], out_buf[ts],
                                                           binary || grad ? other.buffer[ts] : -1,
                                                           binary || grad ? other.first[ts] : 0)});
    out.sram_read_bytes += r.size() * vb * (binary || grad ? 2 : 1);
    out.sram_write_bytes += r.size() * vb;
  }
  if (!operands.exchange.transfers.empty()) out.program.steps.push_back(std::move(operands));
  out.program.steps.push_back(std::move(compute));
  append_loop_control(out.program, machine);
  return out;
}

}  // namespace tilesim::ipu
