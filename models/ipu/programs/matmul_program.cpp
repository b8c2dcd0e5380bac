// matmul and segment_matmul as BSP programs on the AMP units, following the plan's split (S row blocks
// of the input, H column blocks of the weight, K blocks of the inner dimension; plan.hpp):
//   operands: every tile (s, h, k) receives its input block (rows s, inner k) and its weight block
//             (inner k, columns h) from the linear layout; each block is one broadcast to the H (or S)
//             tiles that share it; the tiles that finish an output block also receive its bias columns;
//   amp:      one AMP vertex per tile multiplies its blocks; with K > 1 the K partial products of each
//             output block are exchanged in row chunks, chunk q to tile (s, h, q);
//   reduce (K > 1 or bias): chunk q is summed on tile (s, h, q) with the bias added (a Reduce vertex),
//             or with K = 1 the bias is added in place (a BinaryOp);
// and the finished blocks go back to the linear layout in the last exchange. A segment_matmul runs one
// such matmul per non-empty segment on its own range of tiles, all in the same supersteps.
#include <algorithm>

#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/planning/blocks.hpp"
#include "models/ipu/programs/linear_buffers.hpp"
#include "models/ipu/programs/op_program.hpp"

namespace tilesim::ipu {

namespace {

// The tensors every part reads from and writes to, in the linear layout.
struct LinearOperands {
  std::int64_t inner = 0, cols = 0;  // K, N
  LinearLayout x, w, bias, out;
  std::vector<sim::BufferId> x_buf, w_buf, bias_buf, out_buf;
};

// A vertex whose workers share `elements` evenly.
template <class WorkerCycles>
sim::Vertex spread_vertex(const std::string& codelet, std::int64_t elements, const IpuMachine& m, WorkerCycles worker) {
  const std::int64_t W = m.chip.worker_contexts;
  sim::Vertex v;
  v.codelet = codelet;
  v.supervisor_cycles = m.codelets.supervisor_cycles;
  v.worker_cycles = worker_split_cycles(elements, W, worker);
  return v;
}

void add_part(const MatmulPart& part, bool bias, const LinearOperands& lin, const IpuMachine& m,
              OpProgram& out, sim::Superstep& operands, sim::Superstep& amp, sim::Superstep& reduce,
              std::vector<TensorPiece>& finished) {
  sim::Program& prog = out.program;
  const auto& costs = m.codelets;
  const std::int64_t S = part.split.row_blocks, H = part.split.column_blocks, K = part.split.k_blocks;
  const std::int64_t mb = part.rows_per_block, nb = part.columns_per_block, kb = part.k_per_block;
  const std::int64_t rows = part.rows, inner = lin.inner, cols = lin.cols;
  const std::int64_t W = m.chip.worker_contexts;
  auto tile = [&](std::int64_t s, std::int64_t h, std::int64_t k) {
    return static_cast<sim::TileId>(part.first_tile + (s * H + h) * K + k);
  };
  const auto n_tiles = static_cast<std::size_t>(S * H * K);
  std::vector<sim::BufferId> x_blk(n_tiles, -1), w_blk(n_tiles, -1), partial(n_tiles, -1);
  auto at = [&](std::int64_t s, std::int64_t h, std::int64_t k) { return static_cast<std::size_t>((s * H + h) * K + k); };

  for (std::int64_t s = 0; s < S; ++s) {
    const Range rs = block(rows, mb, s);
    for (std::int64_t k = 0; k < K; ++k) {
      const Range kk = block(inner, kb, k);
      std::vector<sim::BufferId> copies;
      for (std::int64_t h = 0; h < H; ++h) {
        x_blk[at(s, h, k)] = prog.add_buffer("input block", tile(s, h, k), rs.size() * kk.size() * kValueBytes);
        if (h > 0) copies.push_back(x_blk[at(s, h, k)]);
      }
      broadcast_from_linear(operands.exchange, {x_blk[at(s, 0, k)], part.row_begin + rs.begin, rs.size(), kk.begin, kk.size()},
                            copies, inner, lin.x, lin.x_buf, kValueBytes);
    }
  }
  for (std::int64_t h = 0; h < H; ++h) {
    const Range ch = block(cols, nb, h);
    for (std::int64_t k = 0; k < K; ++k) {
      const Range kk = block(inner, kb, k);
      std::vector<sim::BufferId> copies;
      for (std::int64_t s = 0; s < S; ++s) {
        w_blk[at(s, h, k)] = prog.add_buffer("weight block", tile(s, h, k), kk.size() * ch.size() * kValueBytes);
        if (s > 0) copies.push_back(w_blk[at(s, h, k)]);
      }
      // The weight of segment g is rows [g * inner, (g + 1) * inner) of the [segments * inner, cols] weight.
      broadcast_from_linear(operands.exchange,
                            {w_blk[at(0, h, k)], part.segment * inner + kk.begin, kk.size(), ch.begin, ch.size()}, copies, cols,
                            lin.w, lin.w_buf, kValueBytes);
    }
  }

  for (std::int64_t s = 0; s < S; ++s) {
    const Range rs = block(rows, mb, s);
    for (std::int64_t h = 0; h < H; ++h) {
      const Range ch = block(cols, nb, h);
      for (std::int64_t k = 0; k < K; ++k) {
        const Range kk = block(inner, kb, k);
        const auto t = tile(s, h, k);
        const auto p = prog.add_buffer(K == 1 ? "out" : "partial products", t, rs.size() * ch.size() * kValueBytes);
        partial[at(s, h, k)] = p;
        sim::Vertex v;
        v.codelet = "AMPMatMul";
        // The AMP vertex occupies the tile: its fixed cost as the supervisor's, its MACs spread over the
        // workers' slots (tile cycles = workers x per worker + fixed, as the cost function gives).
        const sim::Cycles total = amp_matmul_tile_cycles(rs.size(), kk.size(), ch.size(), costs);
        v.supervisor_cycles = costs.amp_vertex_fixed_cycles;
        v.worker_cycles.assign(static_cast<std::size_t>(W), ceil_div(total - costs.amp_vertex_fixed_cycles, W));
        v.buffers = {{x_blk[at(s, h, k)], 0}, {w_blk[at(s, h, k)], 0}, {p, 0}};
        v.execute = [r = rs.size(), kn = kk.size(), c = ch.size()](const sim::VertexContext& ctx) {
          const auto* x = ctx.as<const float>(0);
          const auto* w = ctx.as<const float>(1);
          auto* y = ctx.as<float>(2);
          std::fill(y, y + r * c, 0.0f);
          for (std::int64_t i = 0; i < r; ++i) {
            for (std::int64_t q = 0; q < kn; ++q) {
              const float a = x[i * kn + q];
              for (std::int64_t j = 0; j < c; ++j) y[i * c + j] += a * w[q * c + j];
            }
          }
        };
        out.sram_read_bytes += (rs.size() * kk.size() + kk.size() * ch.size()) * kValueBytes;
        out.sram_write_bytes += rs.size() * ch.size() * kValueBytes;
        amp.compute.vertices.push_back({t, std::move(v)});
      }

      // Bias columns for the tiles that finish this block.
      std::vector<sim::BufferId> bias_blk;
      const std::int64_t chunk = ceil_div(rs.size(), K);
      if (bias) {
        for (std::int64_t q = 0; q < K; ++q) {
          if (K > 1 && block(rs.size(), chunk, q).empty()) continue;
          bias_blk.push_back(prog.add_buffer("bias block", tile(s, h, q), ch.size() * kValueBytes));
        }
        const std::vector<sim::BufferId> copies(bias_blk.begin() + 1, bias_blk.end());
        broadcast_from_linear(operands.exchange, {bias_blk.front(), 0, 1, ch.begin, ch.size()}, copies, cols, lin.bias,
                              lin.bias_buf, kValueBytes);
      }

      if (K == 1) {
        const auto p = partial[at(s, h, 0)];
        if (bias) {
          sim::Vertex v = spread_vertex("BinaryOp add (bias)", rs.size() * ch.size(), m,
                                        [&](std::int64_t n) { return binary_worker_cycles(BinaryFn::add, n, costs); });
          v.buffers = {{p, 0}, {bias_blk.front(), 0}};
          v.execute = [r = rs.size(), c = ch.size()](const sim::VertexContext& ctx) {
            auto* y = ctx.as<float>(0);
            const auto* b = ctx.as<const float>(1);
            for (std::int64_t i = 0; i < r; ++i)
              for (std::int64_t j = 0; j < c; ++j) y[i * c + j] += b[j];
          };
          out.sram_read_bytes += (rs.size() + 1) * ch.size() * kValueBytes;
          out.sram_write_bytes += rs.size() * ch.size() * kValueBytes;
          reduce.compute.vertices.push_back({tile(s, h, 0), std::move(v)});
        }
        finished.push_back({p, part.row_begin + rs.begin, rs.size(), ch.begin, ch.size()});
        continue;
      }

      // K > 1: chunk q of the block's rows is summed on tile (s, h, q).
      std::size_t bias_at = 0;
      for (std::int64_t q = 0; q < K; ++q) {
        const Range kq = block(rs.size(), chunk, q);
        if (kq.empty()) continue;
        const auto owner = tile(s, h, q);
        const std::int64_t piece_bytes = kq.size() * ch.size() * kValueBytes;
        const auto received = prog.add_buffer("received partial products", owner, (K - 1) * piece_bytes);
        for (std::int64_t k = 0; k < K; ++k) {
          if (k == q) continue;
          const std::int64_t slot = k < q ? k : k - 1;
          amp.exchange.transfers.push_back(
              {{partial[at(s, h, k)], kq.begin * ch.size() * kValueBytes}, piece_bytes, {{received, slot * piece_bytes}}});
        }
        const auto result = prog.add_buffer("out", owner, piece_bytes);
        finished.push_back({result, part.row_begin + rs.begin + kq.begin, kq.size(), ch.begin, ch.size()});
        const std::int64_t partials = K + (bias ? 1 : 0);
        sim::Vertex v = spread_vertex("Reduce", kq.size() * ch.size(), m,
                                      [&](std::int64_t n) { return reduce_worker_cycles(n, partials, costs); });
        v.buffers = {{partial[at(s, h, q)], kq.begin * ch.size() * kValueBytes}, {received, 0}, {result, 0}};
        if (bias) v.buffers.push_back({bias_blk[bias_at++], 0});
        v.execute = [r = kq.size(), c = ch.size(), q, K, bias](const sim::VertexContext& ctx) {
          const auto* own = ctx.as<const float>(0);
          const auto* recv = ctx.as<const float>(1);
          auto* y = ctx.as<float>(2);
          const float* b = bias ? ctx.as<const float>(3) : nullptr;
          const std::int64_t n = r * c;
          for (std::int64_t e = 0; e < n; ++e) {
            float acc = 0.0f;
            for (std::int64_t k = 0; k < K; ++k) acc += k == q ? own[e] : recv[(k < q ? k : k - 1) * n + e];
            y[e] = b ? acc + b[e % c] : acc;
          }
        };
        out.sram_read_bytes += partials * piece_bytes;
        out.sram_write_bytes += piece_bytes;
        reduce.compute.vertices.push_back({owner, std::move(v)});
      }
    }
  }
}

}  // namespace

OpProgram build_matmul_program(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& offsets,
                               const IpuMachine& machine) {
  const bool segmented = op.kind == OpKind::segment_matmul;
  const bool bias = !segmented && op.bias >= 0;
  const std::int64_t M = op.shape.num_inputs, K = op.shape.num_features, N = op.shape.out_features;
  const std::int64_t segments = segmented ? op.shape.num_segments : 1;

  std::vector<MatmulPart> parts;
  if (segmented) {
    parts = plan.parts;
    // The plan was made for these offsets: a part's rows must be its segment's.
    for (const auto& p : parts) {
      const auto s = static_cast<std::size_t>(p.segment);
      if (s + 1 >= offsets.size() || offsets[s] != p.row_begin || offsets[s + 1] - offsets[s] != p.rows) {
        throw std::logic_error("build_matmul_program: segment_matmul '" + op.name + "' was planned for other offsets");
      }
    }
  } else {
    MatmulPart whole;
    whole.rows = M;
    whole.tiles = plan.tiles_used;
    whole.split = plan.split;
    whole.rows_per_block = plan.rows_per_block;
    whole.columns_per_block = plan.columns_per_block;
    whole.k_per_block = plan.k_per_block;
    parts.push_back(whole);
  }
  bool reduce_step = bias;
  for (const auto& p : parts) reduce_step = reduce_step || p.split.k_blocks > 1;

  OpProgram out;
  sim::Program& prog = out.program;
  prog.name = op.name;
  LinearOperands lin;
  lin.inner = K;
  lin.cols = N;
  lin.x = linear_layout(M * K, kValueBytes, machine);
  lin.w = linear_layout(segments * K * N, kValueBytes, machine);
  lin.out = linear_layout(M * N, kValueBytes, machine);
  lin.x_buf = add_linear_buffers(prog, "input (linear)", lin.x, kValueBytes, &out.input);
  lin.w_buf = add_linear_buffers(prog, "weight (linear)", lin.w, kValueBytes, &out.weight);
  if (bias) {
    lin.bias = linear_layout(N, kValueBytes, machine);
    lin.bias_buf = add_linear_buffers(prog, "bias (linear)", lin.bias, kValueBytes, &out.bias);
  }
  sim::Superstep operands{"operands", {"none", {}}, {"input and weight blocks to the tiles", {}}};
  sim::Superstep amp{"amp", {"AMPMatMul", {}}, {"partial products", {}}};
  sim::Superstep reduce{"reduce", {"Reduce", {}}, {"none", {}}};
  std::vector<TensorPiece> finished;
  for (const auto& p : parts) add_part(p, bias, lin, machine, out, operands, amp, reduce, finished);

  std::vector<TensorPiece> linear_pieces;
  lin.out_buf = add_linear_buffers(prog, "out (linear)", lin.out, kValueBytes, &linear_pieces);
  sim::Superstep& last = reduce_step ? reduce : amp;
  last.exchange.name = "output to linear layout";
  add_linear_transfers(last.exchange, finished, N, lin.out, lin.out_buf, kValueBytes, /*to_linear=*/true);
  out.output = std::move(linear_pieces);
  out.input_width = 1;
  out.output_width = 1;
  prog.steps.push_back(std::move(operands));
  prog.steps.push_back(std::move(amp));
  if (reduce_step) prog.steps.push_back(std::move(reduce));
  append_loop_control(prog, machine);
  return out;
}

}  // namespace tilesim::ipu
