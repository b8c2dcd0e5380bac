// matmul and segment_matmul as BSP programs on the AMP units, following the plan's split (S row blocks
// of the input, H column blocks of the weight, K blocks of the inner dimension; planning/plan.hpp):
//   operands: every tile (s, h, k) receives its input block (rows s, inner k) and its weight block
//             (inner k, columns h) from the linear layout; each block is one broadcast to the H (or S)
//             tiles that share it; the tiles that finish an output block also receive its bias columns;
//   amp:      one AMP vertex per tile multiplies its blocks; with K > 1 the K partial products of each
//             output block are exchanged in row chunks, chunk q to tile (s, h, q);
//   reduce (K > 1 or bias): chunk q is summed on tile (s, h, q) with the bias added (a Reduce vertex),
//             or with K = 1 the bias is added in place (a BinaryOp);
// and the finished blocks go back to the linear layout in the last exchange. A segment_matmul runs one
// such matmul per non-empty segment on its own range of tiles, all in the same supersteps; its backward
// forms (ir/op_graph.hpp) too: transpose_weight reads segment s's weight block from the stored [S, N, K]
// weight, and transpose_input (the weight's gradient) makes a K x N product per segment whose inner
// dimension is the segment's rows, its input block stored transposed (x_s, [rows, K]) and its weight
// operand the segment's rows of g, with a zero block filled for an empty segment.
// A transposed operand (planning/plan.hpp, MatmulTranspose) moves as the stored rectangle of each block;
// each tile transposes its copy (a Transpose vertex in the amp compute set, before the AMP vertex).
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/machine/training_codelet_costs.hpp"
#include "models/ipu/planning/blocks.hpp"
#include "models/ipu/programs/linear_buffers.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "models/ipu/programs/value_storage.hpp"

namespace tilesim::ipu {

namespace {

// The tensors every part reads from and writes to, in the linear layout.
struct LinearOperands {
  std::int64_t rows = 0, inner = 0, cols = 0;  // M, K, N
  MatmulTranspose transpose;          // operands stored transposed (input [K, M], weight [N, K])
  bool segment_weight_gradient = false;  // segment_matmul's transpose_input form (per part: K x rows_s x N)
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

// The supersteps every part adds to, and what they leave for the last exchange.
struct MatmulSteps {
  OpProgram& out;
  sim::Superstep& operands;
  sim::Superstep& amp;
  sim::Superstep& reduce;
  std::vector<TensorPiece>& finished;  // the output blocks, in the plan's layout
};

// One part of the program (the whole matmul, or one segment of a segment_matmul) as its steps build it.
struct MatmulPartProgram {
  MatmulPartProgram(const MatmulPart& part, bool bias, const LinearOperands& lin, const IpuMachine& m, MatmulSteps steps);

  sim::TileId tile(std::int64_t s, std::int64_t h, std::int64_t k) const {
    return static_cast<sim::TileId>(part.first_tile + (s * H + h) * K + k);
  }
  std::size_t at(std::int64_t s, std::int64_t h, std::int64_t k) const { return static_cast<std::size_t>((s * H + h) * K + k); }

  void place_input_blocks();
  void place_weight_blocks();
  void add_transpose(sim::TileId t, sim::BufferId stored, sim::BufferId block, std::int64_t stored_rows, std::int64_t stored_cols);
  void add_output_block(std::int64_t s, std::int64_t h);
  void add_amp_vertex(std::int64_t s, std::int64_t h, std::int64_t k, Range rs, Range ch);
  std::vector<sim::BufferId> place_bias(std::int64_t s, std::int64_t h, Range rs, Range ch);
  void add_bias_vertex(std::int64_t s, std::int64_t h, Range rs, Range ch, sim::BufferId bias_block);
  void add_reduction(std::int64_t s, std::int64_t h, std::int64_t q, Range rs, Range ch, Range chunk, sim::BufferId bias_block);

  const MatmulPart& part;
  const bool bias;
  const LinearOperands& lin;
  const IpuMachine& m;
  const CodeletCosts& costs;
  const std::int64_t vb;       // bytes per operand and output value (the op's type); partials are float32
  MatmulSteps steps;
  const std::int64_t S, H, K;  // the part's split: row, column and inner-dimension blocks (plan.hpp)
  const std::int64_t W;        // worker contexts
  // The part's product: product_rows x product_inner times product_inner x N (the segment's rows x K,
  // or K x the segment's rows for a segment_matmul's weight gradient), and the first row of its output
  // in the op's output.
  const std::int64_t product_rows, product_inner, out_row_begin;
  std::vector<sim::BufferId> x_blk, w_blk, partial;  // by (s, h, k)
};

MatmulPartProgram::MatmulPartProgram(const MatmulPart& part, bool bias, const LinearOperands& lin, const IpuMachine& m,
                                     MatmulSteps steps)
    : part(part),
      bias(bias),
      lin(lin),
      m(m),
      costs(m.codelets),
      vb(m.value_bytes()),
      steps(steps),
      S(part.split.row_blocks),
      H(part.split.column_blocks),
      K(part.split.k_blocks),
      W(m.chip.worker_contexts),
      product_rows(lin.segment_weight_gradient ? lin.inner : part.rows),
      product_inner(lin.segment_weight_gradient ? part.rows : lin.inner),
      out_row_begin(lin.segment_weight_gradient ? part.segment * lin.inner : part.row_begin),
      x_blk(static_cast<std::size_t>(S * H * K), -1),
      w_blk(static_cast<std::size_t>(S * H * K), -1),
      partial(static_cast<std::size_t>(S * H * K), -1) {}

// Input block (s, k) on tiles (s, h, k) for every h: one broadcast from the linear layout.
void MatmulPartProgram::place_input_blocks() {
  for (std::int64_t s = 0; s < S; ++s) {
    const Range rs = block(product_rows, part.rows_per_block, s);
    for (std::int64_t k = 0; k < K; ++k) {
      const Range kk = block(product_inner, part.k_per_block, k);
      std::vector<sim::BufferId> received;
      for (std::int64_t h = 0; h < H; ++h) {
        x_blk[at(s, h, k)] = steps.out.program.add_buffer("input block", tile(s, h, k), rs.size() * kk.size() * vb);
        if (!lin.transpose.input) {
          received.push_back(x_blk[at(s, h, k)]);
          continue;
        }
        // Stored [K, M]: the block arrives as its [kk, rs] rectangle and is transposed on the tile.
        const auto stored = steps.out.program.add_buffer("input block (stored transposed)", tile(s, h, k), rs.size() * kk.size() * vb);
        received.push_back(stored);
        add_transpose(tile(s, h, k), stored, x_blk[at(s, h, k)], kk.size(), rs.size());
      }
      const std::vector<sim::BufferId> copies(received.begin() + 1, received.end());
      if (lin.segment_weight_gradient) {
        // x_s^T: the block is rows kk of the segment and columns rs of x [M, K].
        broadcast_from_linear(steps.out.program, steps.operands.exchange, {received.front(), part.row_begin + kk.begin, kk.size(), rs.begin, rs.size()},
                              copies, lin.inner, lin.x, lin.x_buf, vb);
      } else if (lin.transpose.input) {
        broadcast_from_linear(steps.out.program, steps.operands.exchange, {received.front(), kk.begin, kk.size(), part.row_begin + rs.begin, rs.size()},
                              copies, lin.rows, lin.x, lin.x_buf, vb);
      } else {
        broadcast_from_linear(steps.out.program, steps.operands.exchange, {received.front(), part.row_begin + rs.begin, rs.size(), kk.begin, kk.size()},
                              copies, lin.inner, lin.x, lin.x_buf, vb);
      }
    }
  }
}

// Weight block (k, h) on tiles (s, h, k) for every s: one broadcast from the linear layout. The weight
// of segment g is rows [g * inner, (g + 1) * inner) of the [segments * inner, cols] weight.
void MatmulPartProgram::place_weight_blocks() {
  for (std::int64_t h = 0; h < H; ++h) {
    const Range ch = block(lin.cols, part.columns_per_block, h);
    for (std::int64_t k = 0; k < K; ++k) {
      const Range kk = block(product_inner, part.k_per_block, k);
      std::vector<sim::BufferId> received;
      for (std::int64_t s = 0; s < S; ++s) {
        w_blk[at(s, h, k)] = steps.out.program.add_buffer("weight block", tile(s, h, k), kk.size() * ch.size() * vb);
        if (!lin.transpose.weight) {
          received.push_back(w_blk[at(s, h, k)]);
          continue;
        }
        // Stored [N, K]: the block arrives as its [ch, kk] rectangle and is transposed on the tile.
        const auto stored = steps.out.program.add_buffer("weight block (stored transposed)", tile(s, h, k), kk.size() * ch.size() * vb);
        received.push_back(stored);
        add_transpose(tile(s, h, k), stored, w_blk[at(s, h, k)], ch.size(), kk.size());
      }
      const std::vector<sim::BufferId> copies(received.begin() + 1, received.end());
      if (lin.transpose.weight) {
        // Stored [N, K], or a segment's [N, K] block of the stored [S, N, K] weight.
        broadcast_from_linear(steps.out.program, steps.operands.exchange, {received.front(), part.segment * lin.cols + ch.begin, ch.size(), kk.begin, kk.size()},
                              copies, lin.inner, lin.w, lin.w_buf, vb);
      } else if (lin.segment_weight_gradient) {
        // g_s: rows kk of the segment of g [M, N].
        broadcast_from_linear(steps.out.program, steps.operands.exchange, {received.front(), part.row_begin + kk.begin, kk.size(), ch.begin, ch.size()},
                              copies, lin.cols, lin.w, lin.w_buf, vb);
      } else {
        broadcast_from_linear(steps.out.program, steps.operands.exchange,
                              {received.front(), part.segment * lin.inner + kk.begin, kk.size(), ch.begin, ch.size()},
                              copies, lin.cols, lin.w, lin.w_buf, vb);
      }
    }
  }
}

// A Transpose vertex on tile t: `block` (stored_cols x stored_rows) from `stored` (stored_rows x
// stored_cols), its workers sharing the elements. It joins the amp compute set ahead of the tile's AMP
// vertex, which the engine runs after it.
void MatmulPartProgram::add_transpose(sim::TileId t, sim::BufferId stored, sim::BufferId block, std::int64_t stored_rows,
                                      std::int64_t stored_cols) {
  sim::Vertex v = spread_vertex("Transpose", stored_rows * stored_cols, m,
                                [&](std::int64_t n) { return transpose_worker_cycles(n, costs); });
  v.buffers = {{stored, 0}, {block, 0}};
  v.execute = with_value_storage(m.value_dtype, [&](auto storage) -> sim::VertexBody {
    using V = decltype(storage);
    return [r = stored_rows, c = stored_cols](const sim::VertexContext& ctx) {
      const auto* src = ctx.as<const V>(0);
      auto* dst = ctx.as<V>(1);
      for (std::int64_t i = 0; i < r; ++i)
        for (std::int64_t j = 0; j < c; ++j) dst[j * r + i] = src[i * c + j];
    };
  });
  steps.out.sram_read_bytes += stored_rows * stored_cols * vb;
  steps.out.sram_write_bytes += stored_rows * stored_cols * vb;
  steps.amp.compute.vertices.push_back({t, std::move(v)});
}

// Output block (s, h): the AMP vertex on each of its K tiles, then (with a bias or K > 1) its
// finishing: the bias added in place (K = 1), or row chunk q of the K partial products summed, with
// the bias, on tile (s, h, q).
void MatmulPartProgram::add_output_block(std::int64_t s, std::int64_t h) {
  const Range rs = block(product_rows, part.rows_per_block, s);
  const Range ch = block(lin.cols, part.columns_per_block, h);
  for (std::int64_t k = 0; k < K; ++k) add_amp_vertex(s, h, k, rs, ch);
  const std::vector<sim::BufferId> bias_blk = bias ? place_bias(s, h, rs, ch) : std::vector<sim::BufferId>{};
  if (K == 1) {
    if (bias) add_bias_vertex(s, h, rs, ch, bias_blk.front());
    steps.finished.push_back({partial[at(s, h, 0)], out_row_begin + rs.begin, rs.size(), ch.begin, ch.size()});
    return;
  }
  const std::int64_t chunk = ceil_div(rs.size(), K);
  std::size_t bias_at = 0;
  for (std::int64_t q = 0; q < K; ++q) {
    const Range kq = block(rs.size(), chunk, q);
    if (kq.empty()) continue;
    add_reduction(s, h, q, rs, ch, kq, bias ? bias_blk[bias_at++] : -1);
  }
}

void MatmulPartProgram::add_amp_vertex(std::int64_t s, std::int64_t h, std::int64_t k, Range rs, Range ch) {
  const Range kk = block(product_inner, part.k_per_block, k);
  const auto t = tile(s, h, k);
  // With K > 1 the products are float32 partials (poplin's partials type), summed and rounded once by
  // the reduction; with K = 1 the AMP vertex writes the output's type itself.
  const std::int64_t product_bytes = K == 1 ? vb : kPartialBytes;
  const auto p = steps.out.program.add_buffer(K == 1 ? "out" : "partial products", t, rs.size() * ch.size() * product_bytes);
  partial[at(s, h, k)] = p;
  sim::Vertex v;
  v.codelet = "AMPMatMul";
  // The AMP vertex occupies the tile: its fixed cost as the supervisor's, its MACs spread over the
  // workers' slots (tile cycles = workers x per worker + fixed, as the cost function gives).
  const sim::Cycles total = amp_matmul_tile_cycles(rs.size(), kk.size(), ch.size(), costs);
  v.supervisor_cycles = costs.amp_vertex_fixed_cycles;
  v.worker_cycles.assign(static_cast<std::size_t>(W), ceil_div(total - costs.amp_vertex_fixed_cycles, W));
  v.buffers = {{x_blk[at(s, h, k)], 0}, {w_blk[at(s, h, k)], 0}, {p, 0}};
  v.execute = with_value_storage(m.value_dtype, [&](auto storage) -> sim::VertexBody {
    using V = decltype(storage);
    return [r = rs.size(), kn = kk.size(), c = ch.size(), partials = K > 1](const sim::VertexContext& ctx) {
      const auto* x = ctx.as<const V>(0);
      const auto* w = ctx.as<const V>(1);
      if constexpr (std::is_same_v<V, float>) {
        auto* y = ctx.as<float>(2);
        std::fill(y, y + r * c, 0.0f);
        for (std::int64_t i = 0; i < r; ++i) {
          for (std::int64_t q = 0; q < kn; ++q) {
            const float a = x[i * kn + q];
            for (std::int64_t j = 0; j < c; ++j) y[i * c + j] += a * w[q * c + j];
          }
        }
      } else {
        // 16-bit operands, float32 accumulation (the AMP units'), one rounding when the vertex writes
        // the output itself.
        std::vector<float> acc(static_cast<std::size_t>(c));
        for (std::int64_t i = 0; i < r; ++i) {
          std::fill(acc.begin(), acc.end(), 0.0f);
          for (std::int64_t q = 0; q < kn; ++q) {
            const float a = value(x[i * kn + q]);
            for (std::int64_t j = 0; j < c; ++j) acc[static_cast<std::size_t>(j)] += a * value(w[q * c + j]);
          }
          if (partials) {
            std::copy(acc.begin(), acc.end(), ctx.as<float>(2) + i * c);
          } else {
            for (std::int64_t j = 0; j < c; ++j) store(ctx.as<V>(2) + i * c + j, acc[static_cast<std::size_t>(j)]);
          }
        }
      }
    };
  });
  steps.out.sram_read_bytes += (rs.size() * kk.size() + kk.size() * ch.size()) * vb;
  steps.out.sram_write_bytes += rs.size() * ch.size() * product_bytes;
  steps.amp.compute.vertices.push_back({t, std::move(v)});
}

// Bias columns for the tiles that finish output block (s, h): one broadcast from the linear layout.
std::vector<sim::BufferId> MatmulPartProgram::place_bias(std::int64_t s, std::int64_t h, Range rs, Range ch) {
  std::vector<sim::BufferId> bias_blk;
  const std::int64_t chunk = ceil_div(rs.size(), K);
  for (std::int64_t q = 0; q < K; ++q) {
    if (K > 1 && block(rs.size(), chunk, q).empty()) continue;
    bias_blk.push_back(steps.out.program.add_buffer("bias block", tile(s, h, q), ch.size() * vb));
  }
  const std::vector<sim::BufferId> copies(bias_blk.begin() + 1, bias_blk.end());
  broadcast_from_linear(steps.out.program, steps.operands.exchange, {bias_blk.front(), 0, 1, ch.begin, ch.size()}, copies, lin.cols, lin.bias,
                        lin.bias_buf, vb);
  return bias_blk;
}

// K = 1: the bias added in place to the output block (a BinaryOp).
void MatmulPartProgram::add_bias_vertex(std::int64_t s, std::int64_t h, Range rs, Range ch, sim::BufferId bias_block) {
  sim::Vertex v = spread_vertex("BinaryOp add (bias)", rs.size() * ch.size(), m,
                                [&](std::int64_t n) { return binary_worker_cycles(BinaryFn::add, n, costs); });
  v.buffers = {{partial[at(s, h, 0)], 0}, {bias_block, 0}};
  // A half output rounds twice (product, then sum), as poplin's matmul and popops' bias add do.
  v.execute = with_value_storage(m.value_dtype, [&](auto storage) -> sim::VertexBody {
    using V = decltype(storage);
    return [r = rs.size(), c = ch.size()](const sim::VertexContext& ctx) {
      auto* y = ctx.as<V>(0);
      const auto* b = ctx.as<const V>(1);
      for (std::int64_t i = 0; i < r; ++i)
        for (std::int64_t j = 0; j < c; ++j) store(&y[i * c + j], value(y[i * c + j]) + value(b[j]));
    };
  });
  steps.out.sram_read_bytes += (rs.size() + 1) * ch.size() * vb;
  steps.out.sram_write_bytes += rs.size() * ch.size() * vb;
  steps.reduce.compute.vertices.push_back({tile(s, h, 0), std::move(v)});
}

// K > 1: row chunk `chunk` (q) of output block (s, h) from the K partial products, summed with the bias
// (`bias_block`, or -1) on tile (s, h, q) by a Reduce vertex.
void MatmulPartProgram::add_reduction(std::int64_t s, std::int64_t h, std::int64_t q, Range rs, Range ch, Range chunk,
                                      sim::BufferId bias_block) {
  const auto owner = tile(s, h, q);
  const std::int64_t piece_bytes = chunk.size() * ch.size() * kPartialBytes;
  const auto received = steps.out.program.add_buffer("received partial products", owner, (K - 1) * piece_bytes);
  for (std::int64_t k = 0; k < K; ++k) {
    if (k == q) continue;
    const std::int64_t slot = k < q ? k : k - 1;
    steps.amp.exchange.transfers.push_back(
        {{partial[at(s, h, k)], chunk.begin * ch.size() * kPartialBytes}, piece_bytes, {{received, slot * piece_bytes}}});
  }
  const std::int64_t result_bytes = chunk.size() * ch.size() * vb;
  const auto result = steps.out.program.add_buffer("out", owner, result_bytes);
  steps.finished.push_back({result, out_row_begin + rs.begin + chunk.begin, chunk.size(), ch.begin, ch.size()});
  const std::int64_t partials = K + (bias ? 1 : 0);
  sim::Vertex v = spread_vertex("Reduce", chunk.size() * ch.size(), m,
                                [&](std::int64_t n) { return reduce_worker_cycles(n, partials, float32_partial_codelets(m)); });
  v.buffers = {{partial[at(s, h, q)], chunk.begin * ch.size() * kPartialBytes}, {received, 0}, {result, 0}};
  if (bias) v.buffers.push_back({bias_block, 0});
  v.execute = with_value_storage(m.value_dtype, [&](auto storage) -> sim::VertexBody {
    using V = decltype(storage);
    return [r = chunk.size(), c = ch.size(), q, K = K, bias = bias](const sim::VertexContext& ctx) {
      const auto* own = ctx.as<const float>(0);
      const auto* recv = ctx.as<const float>(1);
      auto* y = ctx.as<V>(2);
      const V* b = bias ? ctx.as<const V>(3) : nullptr;
      const std::int64_t n = r * c;
      for (std::int64_t e = 0; e < n; ++e) {
        float acc = 0.0f;
        for (std::int64_t k = 0; k < K; ++k) acc += k == q ? own[e] : recv[(k < q ? k : k - 1) * n + e];
        store(&y[e], b ? acc + value(b[e % c]) : acc);
      }
    };
  });
  steps.out.sram_read_bytes += K * piece_bytes + (bias ? result_bytes : 0);  // the bias read once per output element
  steps.out.sram_write_bytes += result_bytes;
  steps.reduce.compute.vertices.push_back({owner, std::move(v)});
}

void add_part(const MatmulPart& part, bool bias, const LinearOperands& lin, const IpuMachine& m, MatmulSteps steps) {
  MatmulPartProgram p(part, bias, lin, m, steps);
  p.place_input_blocks();
  p.place_weight_blocks();
  for (std::int64_t s = 0; s < p.S; ++s) {
    for (std::int64_t h = 0; h < p.H; ++h) p.add_output_block(s, h);
  }
}

// The parts of the program: a segment_matmul's plan parts (checked against the offsets the program is
// built for), or the whole matmul as one part.
std::vector<MatmulPart> program_parts(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& offsets) {
  if (op.kind == OpKind::segment_matmul) {
    // The plan was made for these offsets: a part's rows must be its segment's.
    for (const auto& p : plan.parts) {
      const auto s = static_cast<std::size_t>(p.segment);
      if (s + 1 >= offsets.size() || offsets[s] != p.row_begin || offsets[s + 1] - offsets[s] != p.rows) {
        throw std::logic_error("build_matmul_program: segment_matmul '" + op.name + "' was planned for other offsets");
      }
    }
    return plan.parts;
  }
  MatmulPart whole;
  whole.rows = op.shape.num_inputs;
  whole.tiles = plan.tiles_used;
  whole.split = plan.split;
  whole.rows_per_block = plan.rows_per_block;
  whole.columns_per_block = plan.columns_per_block;
  whole.k_per_block = plan.k_per_block;
  return {whole};
}

// The weight's gradient of each empty segment: a zero K x N block (a Fill vertex in the amp compute
// set) on the tile after the parts' (the plan's choice, planning/dense_plan.cpp), to the linear layout
// with the other finished blocks.
void add_empty_segment_zeros(const Op& op, const std::vector<MatmulPart>& parts, const std::vector<std::int32_t>& offsets,
                             const LinearOperands& lin, const IpuMachine& m, OpProgram& out, sim::Superstep& amp,
                             std::vector<TensorPiece>& finished) {
  std::int64_t after_parts = 0;
  for (const auto& p : parts) after_parts = std::max(after_parts, p.first_tile + p.tiles);
  const auto t = static_cast<sim::TileId>(std::min<std::int64_t>(m.chip.num_tiles - 1, after_parts));
  for (std::int64_t s = 0; s < op.shape.num_segments; ++s) {
    if (offsets[static_cast<std::size_t>(s + 1)] > offsets[static_cast<std::size_t>(s)]) continue;
    const std::int64_t elements = lin.inner * lin.cols;
    const std::int64_t vb = m.value_bytes();
    const auto zeros = out.program.add_buffer("zero block (empty segment)", t, elements * vb);
    sim::Vertex v = spread_vertex("Fill", elements, m, [&](std::int64_t n) { return fill_worker_cycles(n * vb, m.codelets); });
    v.buffers = {{zeros, 0}};
    // All-zero bits are 0.0 in float32 and float16 alike.
    v.execute = [bytes = elements * vb](const sim::VertexContext& ctx) { std::memset(ctx.data(0), 0, static_cast<std::size_t>(bytes)); };
    out.sram_write_bytes += elements * vb;
    amp.compute.vertices.push_back({t, std::move(v)});
    finished.push_back({zeros, s * lin.inner, lin.inner, 0, lin.cols});
  }
}

}  // namespace

OpProgram build_matmul_program(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& offsets,
                               const IpuMachine& machine, sim::Mode mode) {
  const bool segmented = op.kind == OpKind::segment_matmul;
  const bool bias = !segmented && op.bias >= 0;
  const std::int64_t rows = op.shape.num_inputs, inner = op.shape.num_features, cols = op.shape.out_features;
  const std::int64_t segments = segmented ? op.shape.num_segments : 1;
  const std::vector<MatmulPart> parts = program_parts(op, plan, offsets);
  bool reduce_step = bias;
  for (const auto& p : parts) reduce_step = reduce_step || p.split.k_blocks > 1;

  require_value_dtype(op, machine);
  const std::int64_t vb = machine.value_bytes();
  OpProgram out;
  sim::Program& prog = out.program;
  prog.name = op.name;
  set_program_mode(prog, machine, mode);
  LinearOperands lin;
  lin.rows = rows;
  lin.inner = inner;
  lin.cols = cols;
  lin.segment_weight_gradient = segmented && op.transpose_input;
  lin.transpose = {op.transpose_input, op.transpose_weight};
  lin.x = linear_layout(rows * inner, vb, machine);
  // A segment_matmul's weight gradient reads g [rows, cols] as its weight operand and writes
  // [segments * inner, cols].
  lin.w = linear_layout(lin.segment_weight_gradient ? rows * cols : segments * inner * cols, vb, machine);
  lin.out = linear_layout(lin.segment_weight_gradient ? segments * inner * cols : rows * cols, vb, machine);
  lin.x_buf = add_linear_buffers(prog, "input (linear)", lin.x, vb, &out.input);
  lin.w_buf = add_linear_buffers(prog, "weight (linear)", lin.w, vb, &out.weight);
  if (bias) {
    lin.bias = linear_layout(cols, vb, machine);
    lin.bias_buf = add_linear_buffers(prog, "bias (linear)", lin.bias, vb, &out.bias);
  }
  sim::Superstep operands{"operands", {"none", {}}, {"input and weight blocks to the tiles", {}}};
  sim::Superstep amp{"amp", {"AMPMatMul", {}}, {"partial products", {}}};
  sim::Superstep reduce{"reduce", {"Reduce", {}}, {"none", {}}};
  std::vector<TensorPiece> finished;
  for (const auto& p : parts) add_part(p, bias, lin, machine, {out, operands, amp, reduce, finished});
  if (lin.segment_weight_gradient) add_empty_segment_zeros(op, parts, offsets, lin, machine, out, amp, finished);

  std::vector<TensorPiece> linear_pieces;
  lin.out_buf = add_linear_buffers(prog, "out (linear)", lin.out, vb, &linear_pieces);
  sim::Superstep& last = reduce_step ? reduce : amp;
  last.exchange.name = "output to linear layout";
  add_linear_transfers(prog, last.exchange, finished, cols, lin.out, lin.out_buf, vb, /*to_linear=*/true);
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
