// unary and binary elementwise ops as BSP programs, mapped where their operands live: the input and
// the output share the linear layout, so each tile computes the elements it holds and nothing moves,
// except a binary's `other` when it is not the input's shape (a per-row scalar, a per-head value, a
// bias row): the piece of `other` each tile's rows need is broadcast to it first (one transfer per
// piece, to every tile needing it), in a superstep of its own before the compute.
#include <algorithm>
#include <cmath>
#include <map>

#include "ir/reference/reference.hpp"
#include "models/ipu/blocks.hpp"
#include "models/ipu/codelet_costs.hpp"
#include "models/ipu/linear_layout.hpp"
#include "models/ipu/op_program.hpp"

namespace tilesim::ipu {

namespace {

// The functions as the reference defines them, in double, rounded once: the simulated IPU's values are
// checked against the reference, and a correctly rounded result passes any bound it states.
float apply_unary(UnaryFn fn, float scalar, float x) {
  return static_cast<float>(reference::unary_exact(fn, scalar, x));
}

float apply_binary(BinaryFn fn, float a, float b) {
  switch (fn) {
    case BinaryFn::add: return a + b;
    case BinaryFn::subtract: return a - b;
    case BinaryFn::multiply: return a * b;
    case BinaryFn::divide: return a / b;
  }
  return a;
}

}  // namespace

OpProgram build_elementwise_program(const Op& op, const OpPlan& plan, const IpuMachine& machine) {
  (void)plan;  // the linear layout is the plan
  const std::int64_t rows = op.shape.num_inputs, F = op.shape.num_features;
  const std::int64_t W = machine.chip.worker_contexts;
  const auto& costs = machine.codelets;
  const LinearLayout layout = linear_layout(rows * F, 4, machine);

  OpProgram out;
  sim::Program& prog = out.program;
  prog.name = op.name;
  const auto in_buf = add_linear_buffers(prog, "input (linear)", layout, 4, &out.input);
  const auto out_buf = add_linear_buffers(prog, "out (linear)", layout, 4, &out.output);
  out.input_width = 1;
  out.output_width = 1;

  const bool binary = op.kind == OpKind::binary;
  const std::int64_t other_rows = binary ? op.shape.other_rows : 0, groups = binary ? op.shape.other_groups : 0;
  const std::int64_t other_elements = other_rows * groups;
  // `other` shares the input's layout when it has the input's shape; otherwise each tile gets a copy
  // of the flat range [first, last) of `other` its elements need.
  const bool same_layout = binary && other_elements == rows * F;
  sim::Superstep operands{"operands", {"none", {}}, {"broadcast operand to the tiles that need it", {}}};
  std::vector<sim::BufferId> other_local(static_cast<std::size_t>(layout.tiles_used), -1);
  std::vector<std::int64_t> other_first(static_cast<std::size_t>(layout.tiles_used), 0);
  if (binary) {
    const LinearLayout other_layout = linear_layout(other_elements, 4, machine);
    const auto other_buf = add_linear_buffers(prog, "other (linear)", other_layout, 4, &out.weight);
    if (same_layout) {
      other_local = other_buf;
      for (std::int64_t t = 0; t < layout.tiles_used; ++t) other_first[static_cast<std::size_t>(t)] = layout.tile_range(t).begin;
    } else {
      // Tiles needing the same range share one broadcast.
      std::map<std::pair<std::int64_t, std::int64_t>, std::vector<sim::BufferId>> needers;
      for (std::int64_t t = 0; t < layout.tiles_used; ++t) {
        const Range r = layout.tile_range(t);
        const std::int64_t first_row = r.begin / F, last_row = (r.end - 1) / F;
        const std::int64_t first = other_rows == 1 ? 0 : first_row * groups;
        const std::int64_t last = other_rows == 1 ? groups : (last_row + 1) * groups;
        const auto b = prog.add_buffer("other (needed)", static_cast<sim::TileId>(t), (last - first) * 4);
        other_local[static_cast<std::size_t>(t)] = b;
        other_first[static_cast<std::size_t>(t)] = first;
        needers[{first, last}].push_back(b);
      }
      for (const auto& [range, buffers] : needers) {
        // The range as a 1-wide tensor piece: cut at the linear tiles of `other`, broadcast to every needer.
        const std::size_t begin = operands.exchange.transfers.size();
        add_linear_transfers(operands.exchange, {{buffers.front(), range.first, range.second - range.first, 0, 1}}, 1,
                             other_layout, other_buf, 4, /*to_linear=*/false);
        for (std::size_t k = begin; k < operands.exchange.transfers.size(); ++k) {
          auto& tr = operands.exchange.transfers[k];
          const std::int64_t offset = tr.dst.front().offset_bytes;
          for (std::size_t j = 1; j < buffers.size(); ++j) tr.dst.push_back({buffers[j], offset});
        }
      }
    }
  }

  sim::Superstep compute{"compute", {binary ? "BinaryOp " + to_string(op.binary) : "UnaryOp " + to_string(op.unary), {}},
                         {"none", {}}};
  for (std::int64_t t = 0; t < layout.tiles_used; ++t) {
    const Range r = layout.tile_range(t);
    const std::int64_t n = r.size();
    sim::Vertex v;
    v.codelet = compute.compute.name;
    v.supervisor_cycles = costs.supervisor_cycles;
    v.worker_cycles = worker_split_cycles(n, W, [&](std::int64_t k) {
      return binary ? binary_worker_cycles(op.binary, k, costs) : unary_worker_cycles(op.unary, k, costs);
    });
    const auto ts = static_cast<std::size_t>(t);
    out.sram_read_bytes += n * 4 * (binary ? 2 : 1);
    out.sram_write_bytes += n * 4;
    if (binary) {
      v.buffers = {{in_buf[ts], 0}, {other_local[ts], 0}, {out_buf[ts], 0}};
      v.execute = [begin = r.begin, n, F, other_rows, groups, first = other_first[ts], fn = op.binary](const sim::VertexContext& ctx) {
        const auto* a = ctx.as<const float>(0);
        const auto* b = ctx.as<const float>(1);
        auto* y = ctx.as<float>(2);
        const std::int64_t per_group = F / groups;
        for (std::int64_t e = 0; e < n; ++e) {
          const std::int64_t flat = begin + e, row = flat / F, col = flat % F;
          const std::int64_t o = (other_rows == 1 ? 0 : row) * groups + col / per_group;
          y[e] = apply_binary(fn, a[e], b[o - first]);
        }
      };
    } else {
      v.buffers = {{in_buf[ts], 0}, {out_buf[ts], 0}};
      v.execute = [n, fn = op.unary, scalar = op.scalar](const sim::VertexContext& ctx) {
        const auto* a = ctx.as<const float>(0);
        auto* y = ctx.as<float>(1);
        for (std::int64_t e = 0; e < n; ++e) y[e] = apply_unary(fn, scalar, a[e]);
      };
    }
    compute.compute.vertices.push_back({static_cast<sim::TileId>(t), std::move(v)});
  }
  if (!operands.exchange.transfers.empty()) prog.steps.push_back(std::move(operands));
  prog.steps.push_back(std::move(compute));
  append_loop_control(prog, machine);
  return out;
}

}  // namespace tilesim::ipu
