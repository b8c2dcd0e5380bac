// The simulated IPU on the GNN ops beyond gather and scatter-add: scatter mean and max, degree count,
// AMP matmul, segment matmul, unary and binary elementwise ops, and graphs chaining them. Outputs are
// checked against small loops written here (independent of the program builders) and against the
// reference's verification; cycles against the cost functions' structure.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "ir/operands.hpp"
#include "ir/reference/reference.hpp"
#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "models/ipu/planning/plan.hpp"
#include "models/ipu/programs/tensor_io.hpp"
#include "tests/support/ipu_test_support.hpp"

using namespace tilesim;
using namespace tilesim::ipu;
using tilesim_test::bow;
using tilesim_test::uniform_indices;

namespace {

using Problem = tilesim_test::GraphProblem;

Op gather_scatter_op(const std::string& name, OpKind kind, OpShape shape) {
  Op op;
  op.name = name;
  op.kind = kind;
  op.shape = shape;
  return op;
}

BackendResult run_ipu(IpuBackend& backend, const Problem& p, bool timing_only = false) {
  RunOptions options;
  options.timing_only = timing_only;
  return backend.run(p.graph, p.values, options);
}

// Close within a relative float32 tolerance (sums in another order round differently).
void check_close(const std::vector<float>& got, const std::vector<double>& want, double rel = 1e-5) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(static_cast<double>(got[i]) - want[i]) <= rel * (1.0 + std::abs(want[i])));
  }
}

// Runs one op with a given plan on the engine (functional) and returns its output and cycles.
struct Ran {
  std::vector<float> out;
  sim::Cycles cycles = 0;
};
Ran run_with_plan(const Op& op, const OpPlan& plan, const TensorValues& values, const IpuMachine& m, sim::Mode mode) {
  auto& engine = engine_for(m);
  const auto& idx = op.indices >= 0 ? values.i32(op.indices) : std::vector<std::int32_t>{};
  const OpProgram prog = build_op_program(op, plan, idx, m);
  engine.load(prog.program, m.chip, mode);
  if (mode == sim::Mode::functional) {
    if (op.input >= 0) write_pieces(engine, prog.input, values.f32(op.input), prog.input_width);
    write_pieces(engine, prog.indices, idx, 1);
    if (op.weight >= 0) write_pieces(engine, prog.weight, values.f32(op.weight), 1);
    if (op.bias >= 0) write_pieces(engine, prog.bias, values.f32(op.bias), 1);
  }
  Ran r;
  r.cycles = engine.run().total_cycles;
  if (mode == sim::Mode::functional) {
    r.out.assign(static_cast<std::size_t>(op.output_rows() * op.output_cols()), std::nanf(""));
    read_pieces(engine, prog.output, r.out, prog.output_width);
  }
  return r;
}

// Reference loops, written from the op definitions in ir/op_graph.hpp.
std::vector<double> loop_matmul(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>* bias,
                                std::int64_t m, std::int64_t k, std::int64_t n, std::int64_t w_offset = 0) {
  std::vector<double> y(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double acc = bias ? (*bias)[static_cast<std::size_t>(j)] : 0.0;
      for (std::int64_t q = 0; q < k; ++q)
        acc += static_cast<double>(x[static_cast<std::size_t>(i * k + q)]) * w[static_cast<std::size_t>(w_offset + q * n + j)];
      y[static_cast<std::size_t>(i * n + j)] = acc;
    }
  return y;
}

}  // namespace

TEST_CASE("elementwise, AMP and scatter-family costs follow the poplibs structure and grow with size", "[ipu-ops][costs][unit]") {
  const auto& c = bow().codelets;
  // BinaryOp1D float add: 29 + 3 per 2 elements (worker cycles).
  CHECK(binary_worker_cycles(BinaryFn::add, 10, c) == 29 + 5 * 3);
  CHECK(binary_worker_cycles(BinaryFn::divide, 10, c) == 29 + 5 * 10);
  // UnaryOp1D: 17 prologue (33 for the exp family) + per vector.
  CHECK(unary_worker_cycles(UnaryFn::relu, 4, c) == 17 + 2 * 3);
  CHECK(unary_worker_cycles(UnaryFn::exp, 4, c) == 33 + 2 * 6);
  for (UnaryFn fn : {UnaryFn::relu, UnaryFn::leaky_relu, UnaryFn::shifted_softplus, UnaryFn::exp, UnaryFn::scale,
                     UnaryFn::rsqrt_or_zero, UnaryFn::reciprocal_or_zero, UnaryFn::cosine_cutoff, UnaryFn::sigmoid, UnaryFn::softplus,
                     UnaryFn::sqrt, UnaryFn::log, UnaryFn::clamp_min}) {
    INFO(to_string(fn));
    CHECK(unary_worker_cycles(fn, 1000, c) > unary_worker_cycles(fn, 100, c));
  }
  // Transcendental functions cost more than a relu per element.
  CHECK(unary_worker_cycles(UnaryFn::exp, 1000, c) > unary_worker_cycles(UnaryFn::relu, 1000, c));
  CHECK(unary_worker_cycles(UnaryFn::cosine_cutoff, 1000, c) > unary_worker_cycles(UnaryFn::exp, 1000, c));
  // AMP: fixed + 2mkn / 32 (float32 on a Bow tile).
  CHECK(amp_matmul_tile_cycles(1, 1, 1, c) == 335 + 1);
  CHECK(amp_matmul_tile_cycles(64, 64, 64, c) == 335 + 2 * 64 * 64 * 64 / 32);
  CHECK(amp_matmul_tile_cycles(128, 64, 64, c) > amp_matmul_tile_cycles(64, 64, 64, c));
  CHECK(amp_matmul_tile_cycles(0, 64, 64, c) == 0);
}

TEST_CASE("unary ops on the simulated IPU equal the function applied elementwise", "[ipu-ops][functional][unit]") {
  IpuBackend ipu(bow(), "ipu:bow");
  for (UnaryFn fn : {UnaryFn::relu, UnaryFn::leaky_relu, UnaryFn::shifted_softplus, UnaryFn::exp, UnaryFn::scale,
                     UnaryFn::rsqrt_or_zero, UnaryFn::reciprocal_or_zero, UnaryFn::cosine_cutoff, UnaryFn::sigmoid, UnaryFn::softplus,
                     UnaryFn::sqrt, UnaryFn::log, UnaryFn::clamp_min}) {
    INFO(to_string(fn));
    Problem p;
    const std::int64_t rows = 123, cols = 7;
    const TensorId x = p.add_input("x", {rows, cols}, 11);
    auto& xv = p.values.mutable_f32(x);
    xv[0] = 0.0f;  // the masked cases of rsqrt_or_zero and reciprocal_or_zero
    xv[1] = -0.5f;
    if (fn == UnaryFn::cosine_cutoff)
      for (auto& v : xv) v = std::abs(v) * 4.0f;  // distances, some beyond the cutoff
    if (fn == UnaryFn::sqrt || fn == UnaryFn::log)
      for (auto& v : xv) v = std::abs(v) + 0.25f;  // their domain (a NaN compares with nothing)
    Op op = gather_scatter_op("f", OpKind::unary, {rows, cols});
    op.input = x;
    op.unary = fn;
    op.scalar = fn == UnaryFn::cosine_cutoff ? 6.0f : fn == UnaryFn::leaky_relu ? 0.2f : 1.5f;
    p.graph.add_op(op);
    const auto r = run_ipu(ipu, p);
    CHECK(r.ops[0].verified);
    const auto& got = ipu.outputs().f32(p.graph.ops[0].output);
    std::vector<double> want(xv.size());
    for (std::size_t i = 0; i < xv.size(); ++i) {
      const double v = xv[i], a = op.scalar;
      switch (fn) {
        case UnaryFn::relu: want[i] = std::max(v, 0.0); break;
        case UnaryFn::leaky_relu: want[i] = v >= 0 ? v : a * v; break;
        case UnaryFn::shifted_softplus: want[i] = std::log(1.0 + std::exp(v)) - std::log(2.0); break;
        case UnaryFn::exp: want[i] = std::exp(v); break;
        case UnaryFn::scale: want[i] = a * v; break;
        case UnaryFn::rsqrt_or_zero: want[i] = v > 0 ? 1.0 / std::sqrt(v) : 0.0; break;
        case UnaryFn::reciprocal_or_zero: want[i] = v != 0 ? 1.0 / v : 0.0; break;
        case UnaryFn::cosine_cutoff: want[i] = v < a ? 0.5 * (std::cos(M_PI * v / a) + 1.0) : 0.0; break;
        case UnaryFn::sigmoid: want[i] = 1.0 / (1.0 + std::exp(-v)); break;
        case UnaryFn::softplus: want[i] = v > 20 ? v : std::log1p(std::exp(v)); break;
        case UnaryFn::sqrt: want[i] = std::sqrt(v); break;
        case UnaryFn::log: want[i] = std::log(v); break;
        case UnaryFn::clamp_min: want[i] = std::max(v, static_cast<double>(a)); break;
      }
    }
    check_close(got, want);
  }
}

TEST_CASE("binary ops broadcast `other` as the op graph defines, on the simulated IPU", "[ipu-ops][functional][unit]") {
  IpuBackend ipu(bow(), "ipu:bow");
  const std::int64_t rows = 300, cols = 8;
  struct Case {
    std::int64_t other_rows, groups;
    BinaryFn fn;
  };
  for (const Case& k : {Case{rows, cols, BinaryFn::add}, Case{rows, 1, BinaryFn::multiply}, Case{rows, 4, BinaryFn::divide},
                        Case{1, cols, BinaryFn::add}, Case{1, 2, BinaryFn::subtract}, Case{rows, cols, BinaryFn::equal}}) {
    INFO("other [" << k.other_rows << ", " << k.groups << "] " << to_string(k.fn));
    Problem p;
    const TensorId x = p.add_input("x", {rows, cols}, 3);
    const TensorId o = p.add_input("other", {k.other_rows, k.groups}, 4);
    if (k.fn == BinaryFn::divide)
      for (auto& v : p.values.mutable_f32(o)) v = 1.0f + std::abs(v);
    if (k.fn == BinaryFn::equal)  // every third element equal, so both outcomes occur
      for (std::size_t i = 0; i < p.values.f32(o).size(); i += 3) p.values.mutable_f32(o)[i] = p.values.f32(x)[i];
    Op op = gather_scatter_op("b", OpKind::binary, {rows, cols});
    op.shape.other_rows = k.other_rows;
    op.shape.other_groups = k.groups;
    op.input = x;
    op.weight = o;
    op.binary = k.fn;
    p.graph.add_op(op);
    const auto r = run_ipu(ipu, p);
    CHECK(r.ops[0].verified);
    const auto& xv = p.values.f32(x);
    const auto& ov = p.values.f32(o);
    std::vector<double> want(xv.size());
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t c = 0; c < cols; ++c) {
        const double a = xv[static_cast<std::size_t>(i * cols + c)];
        const double b = ov[static_cast<std::size_t>((k.other_rows == 1 ? 0 : i) * k.groups + c / (cols / k.groups))];
        double y = 0;
        switch (k.fn) {
          case BinaryFn::add: y = a + b; break;
          case BinaryFn::subtract: y = a - b; break;
          case BinaryFn::multiply: y = a * b; break;
          case BinaryFn::divide: y = a / b; break;
          case BinaryFn::equal: y = a == b ? 1 : 0; break;
        }
        want[static_cast<std::size_t>(i * cols + c)] = y;
      }
    check_close(ipu.outputs().f32(p.graph.ops[0].output), want);
    // Only a broadcast operand moves; a same-shape one is read where it lives.
    if (k.other_rows == rows && k.groups == cols) CHECK(r.ops[0].exchange_bytes == 0);
    else CHECK(r.ops[0].exchange_bytes > 0);
  }
}

TEST_CASE("scatter mean, scatter max and degree count on the simulated IPU equal small loops", "[ipu-ops][functional][unit]") {
  IpuBackend ipu(bow(), "ipu:bow");
  // Shapes from one row to more rows than tiles; the last one leaves many rows empty.
  for (const OpShape& s : {OpShape{50, 4, 10}, OpShape{1000, 16, 200}, OpShape{3000, 2, 2000}, OpShape{7, 3, 1}}) {
    for (OpKind kind : {OpKind::scatter_mean, OpKind::scatter_max, OpKind::degree_count}) {
      INFO(to_string(kind) << " [" << s.num_inputs << ", " << s.num_features << "] -> " << s.num_outputs);
      Problem p;
      const std::int64_t F = kind == OpKind::degree_count ? 1 : s.num_features;
      Op op = gather_scatter_op("s", kind, {s.num_inputs, F, s.num_outputs});
      if (kind != OpKind::degree_count) op.input = p.add_input("src", {s.num_inputs, F}, 5);
      op.indices = p.add_indices("idx", uniform_indices(s.num_inputs, s.num_outputs, 6));
      p.graph.add_op(op);
      const auto r = run_ipu(ipu, p);
      CHECK(r.ops[0].verified);
      const std::vector<float> none;
      const auto want = tilesim_test::direct_scatter(kind, kind == OpKind::degree_count ? none : p.values.f32(op.input),
                                                     p.values.i32(op.indices), F, s.num_outputs);
      check_close(ipu.outputs().f32(p.graph.ops[0].output), want);
    }
  }
}

TEST_CASE("scatter mean and max are right with every split, including index groups reduced across tiles", "[ipu-ops][functional][unit]") {
  const OpShape s{600, 6, 90};
  for (OpKind kind : {OpKind::scatter_mean, OpKind::scatter_max, OpKind::degree_count}) {
    Problem p;
    const std::int64_t F = kind == OpKind::degree_count ? 1 : s.num_features;
    Op op = gather_scatter_op("s", kind, {s.num_inputs, F, s.num_outputs});
    if (kind != OpKind::degree_count) op.input = p.add_input("src", {s.num_inputs, F}, 8);
    op.indices = p.add_indices("idx", uniform_indices(s.num_inputs, s.num_outputs, 9));
    p.graph.add_op(op);
    const Op& o = p.graph.ops[0];
    // Messages as a graph input (in the plan's layout) and as an earlier op's output (linear layout).
    IpuMachine from_linear = bow();
    from_linear.planner.scatter_messages_from_linear_layout = true;
    for (const IpuMachine* m : {&bow(), static_cast<const IpuMachine*>(&from_linear)}) {
      for (const ipu::Split& split : {ipu::Split{1, 1, 1}, ipu::Split{4, 1, 1}, ipu::Split{1, 3, 1}, ipu::Split{1, 1, 4}, ipu::Split{2, 3, 3}}) {
        INFO(to_string(kind) << " split " << split.row_blocks << "x" << split.column_blocks << "x" << split.index_groups
                             << (m == &bow() ? "" : ", messages from the linear layout"));
        const OpPlan plan = estimate_plan(o, split, *m);
        const Ran functional = run_with_plan(o, plan, p.values, *m, sim::Mode::functional);
        CHECK(reference::verify(o, p.values, functional.out).ok);
        CHECK(run_with_plan(o, plan, p.values, *m, sim::Mode::timing_only).cycles == functional.cycles);
      }
    }
  }
}

TEST_CASE("matmul on the AMP units equals x @ w + b for every split", "[ipu-ops][functional][unit]") {
  const std::int64_t M = 37, K = 20, N = 10;
  for (bool bias : {false, true}) {
    Problem p;
    Op op = gather_scatter_op("lin", OpKind::matmul, {M, K, 0, N});
    op.input = p.add_input("x", {M, K}, 1);
    op.weight = p.add_input("w", {K, N}, 2);
    if (bias) op.bias = p.add_input("b", {N}, 3);
    p.graph.add_op(op);
    const Op& o = p.graph.ops[0];
    const auto want = loop_matmul(p.values.f32(o.input), p.values.f32(o.weight), bias ? &p.values.f32(o.bias) : nullptr, M, K, N);
    for (const ipu::Split& split : {ipu::Split{1, 1, 1, 1}, ipu::Split{8, 1, 1, 1}, ipu::Split{1, 4, 1, 1}, ipu::Split{1, 1, 1, 4}, ipu::Split{4, 2, 1, 3}}) {
      INFO("bias " << bias << " split " << split.row_blocks << "x" << split.column_blocks << "x" << split.k_blocks);
      const OpPlan plan = estimate_matmul(M, K, N, bias, split, bow().chip.num_tiles, bow());
      const Ran functional = run_with_plan(o, plan, p.values, bow(), sim::Mode::functional);
      check_close(functional.out, want);
      CHECK(reference::verify(o, p.values, functional.out).ok);
      CHECK(run_with_plan(o, plan, p.values, bow(), sim::Mode::timing_only).cycles == functional.cycles);
    }
    // And as the planner chooses, through the backend.
    IpuBackend ipu(bow(), "ipu:bow");
    const auto r = run_ipu(ipu, p);
    CHECK(r.ops[0].verified);
    check_close(ipu.outputs().f32(o.output), want);
  }
}

TEST_CASE("segment matmul multiplies each segment by its own weight, empty segments included", "[ipu-ops][functional][unit]") {
  const std::int64_t M = 90, K = 12, N = 6, S = 4;
  Problem p;
  Op op = gather_scatter_op("rel", OpKind::segment_matmul, {M, K, 0, N, S});
  op.input = p.add_input("x", {M, K}, 21);
  op.weight = p.add_input("w", {S, K, N}, 22);
  const std::vector<std::int32_t> offsets{0, 50, 50, 61, 90};  // segment 1 is empty
  op.indices = p.add_indices("offsets", offsets);
  p.graph.add_op(op);
  IpuBackend ipu(bow(), "ipu:bow");
  const auto r = run_ipu(ipu, p);
  CHECK(r.ops[0].verified);
  const auto& x = p.values.f32(op.input);
  const auto& w = p.values.f32(op.weight);
  std::vector<double> want(static_cast<std::size_t>(M * N));
  for (std::int64_t s = 0; s < S; ++s) {
    const std::int64_t b = offsets[static_cast<std::size_t>(s)], e = offsets[static_cast<std::size_t>(s + 1)];
    const std::vector<float> xs(x.begin() + b * K, x.begin() + e * K);
    const auto ys = loop_matmul(xs, w, nullptr, e - b, K, N, s * K * N);
    std::copy(ys.begin(), ys.end(), want.begin() + b * N);
  }
  check_close(ipu.outputs().f32(p.graph.ops[0].output), want);
  const OpPlan plan = plan_op(p.graph.ops[0], offsets, bow());
  CHECK(plan.parts.size() == 3);
  for (const auto& part : plan.parts) CHECK(part.first_tile + part.tiles <= bow().chip.num_tiles);
  CHECK(*run_ipu(ipu, p, true).ops[0].cycles == *r.ops[0].cycles);
}

TEST_CASE("a chained graph runs each op on the outputs of earlier ones, every output verified", "[ipu-ops][functional][unit]") {
  // A GCN-like layer: h = x @ w; messages = h[src]; agg = mean over dst; out = relu(agg + b).
  const std::int64_t N = 200, E = 900, F = 16, H = 8;
  Problem p;
  const TensorId x = p.add_input("x", {N, F}, 31);
  const TensorId w = p.add_input("w", {F, H}, 32);
  const TensorId b = p.add_input("b", {1, H}, 33);
  const TensorId src = p.add_indices("src", uniform_indices(E, N, 34));
  const TensorId dst = p.add_indices("dst", uniform_indices(E, N, 35));
  Op lin = gather_scatter_op("lin", OpKind::matmul, {N, F, 0, H});
  lin.input = x;
  lin.weight = w;
  const TensorId h = p.graph.add_op(lin);
  Op gat = gather_scatter_op("gather", OpKind::gather, {N, H, E});
  gat.input = h;
  gat.indices = src;
  const TensorId msg = p.graph.add_op(gat);
  Op agg = gather_scatter_op("aggregate", OpKind::scatter_mean, {E, H, N});
  agg.input = msg;
  agg.indices = dst;
  const TensorId a = p.graph.add_op(agg);
  Op add = gather_scatter_op("bias", OpKind::binary, {N, H});
  add.shape.other_rows = 1;
  add.shape.other_groups = H;
  add.input = a;
  add.weight = b;
  const TensorId y = p.graph.add_op(add);
  Op act = gather_scatter_op("relu", OpKind::unary, {N, H});
  act.input = y;
  const TensorId out = p.graph.add_op(act);

  IpuBackend ipu(bow(), "ipu:bow");
  const auto r = run_ipu(ipu, p);
  REQUIRE(r.ops.size() == 5);
  for (const auto& row : r.ops) {
    INFO(row.op << ": " << row.verification);
    CHECK(row.verified);
    CHECK(*row.cycles > 0);
  }
  // The end result against loops over the whole layer.
  const auto hv = loop_matmul(p.values.f32(x), p.values.f32(w), nullptr, N, F, H);
  std::vector<double> sum(static_cast<std::size_t>(N * H), 0.0), cnt(static_cast<std::size_t>(N), 0.0);
  for (std::int64_t e = 0; e < E; ++e) {
    const auto s = p.values.i32(src)[static_cast<std::size_t>(e)], d = p.values.i32(dst)[static_cast<std::size_t>(e)];
    cnt[static_cast<std::size_t>(d)] += 1;
    for (std::int64_t c = 0; c < H; ++c) sum[static_cast<std::size_t>(d * H + c)] += hv[static_cast<std::size_t>(s * H + c)];
  }
  std::vector<double> want(sum.size());
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t c = 0; c < H; ++c) {
      const auto i = static_cast<std::size_t>(n * H + c);
      const double mean = cnt[static_cast<std::size_t>(n)] > 0 ? sum[i] / cnt[static_cast<std::size_t>(n)] : 0.0;
      want[i] = std::max(0.0, mean + p.values.f32(b)[static_cast<std::size_t>(c)]);
    }
  check_close(ipu.outputs().f32(out), want, 1e-4);
  // An intermediate gather table comes from the linear layout: the gather pays that exchange.
  CHECK(r.ops[1].exchange_bytes > 0);
  // Timing-only gives the same cycles, op by op.
  const auto t = run_ipu(ipu, p, true);
  for (std::size_t i = 0; i < r.ops.size(); ++i) CHECK(*t.ops[i].cycles == *r.ops[i].cycles);

  // The trace holds every op's compute sets and syncs on one timeline.
  const std::string trace_path = (std::filesystem::temp_directory_path() / "tilesim_ipu_ops_trace.json").string();
  RunOptions options;
  options.timing_only = true;
  options.trace_path = trace_path;
  ipu.run(p.graph, p.values, options);
  std::ifstream in(trace_path);
  const std::string trace((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* name : {"AMPMatMul", "MultiSlice", "MultiUpdateAdd", "ScatterMeanDivide", "BinaryOp add", "UnaryOp relu", "\"amp\""}) {
    INFO(name);
    CHECK(trace.find(name) != std::string::npos);
  }
  std::filesystem::remove(trace_path);
}

TEST_CASE("matmul cycles approach the AMP peak for a large GEMM and the fixed cost for a tiny one", "[ipu-ops][timing][unit]") {
  const auto& m = bow();
  const double peak_flops_per_cycle = static_cast<double>(m.chip.num_tiles) * m.codelets.amp_flops_per_tile_cycle;
  auto simulate = [&](std::int64_t M, std::int64_t K, std::int64_t N) {
    OpGraph g;
    const TensorId x = g.add_tensor({"x", {M, K}, DType::float32});
    const TensorId w = g.add_tensor({"w", {K, N}, DType::float32});
    Op op = gather_scatter_op("mm", OpKind::matmul, {M, K, 0, N});
    op.input = x;
    op.weight = w;
    g.add_op(op);
    return simulate_op_timing(g.ops[0], {}, m);
  };
  auto efficiency = [&](std::int64_t M, std::int64_t K, std::int64_t N) {
    const auto t = simulate(M, K, N);
    return 2.0 * static_cast<double>(M * K * N) / (static_cast<double>(t.stats.total_cycles) * peak_flops_per_cycle);
  };
  // Operands move in O(n^2) bytes and the AMP work grows as n^3, so the share of the peak the whole op
  // reaches (syncs and exchanges included) grows with the GEMM; a large one runs above half the peak.
  const double small = efficiency(256, 256, 256), medium = efficiency(1024, 1024, 1024), large = efficiency(2048, 2048, 2048);
  CHECK(small < medium);
  CHECK(medium < large);
  CHECK(large > 0.5);
  CHECK(large <= 1.0);
  // Tiny: one tile, whose compute is the AMP vertex's fixed cost and almost nothing else.
  const auto tiny = simulate(1, 2, 2);
  CHECK(tiny.plan.tiles_used == 1);
  CHECK(tiny.stats.compute_cycles >= m.codelets.amp_vertex_fixed_cycles);
  CHECK(tiny.stats.compute_cycles <= m.codelets.amp_vertex_fixed_cycles + m.chip.compute_fixed_cycles + 6 * m.chip.worker_contexts);
  // More work costs more cycles.
  CHECK(simulate(2048, 512, 512).stats.total_cycles > simulate(1024, 512, 512).stats.total_cycles);
}

TEST_CASE("dense op cycles grow with size and timing-only equals functional", "[ipu-ops][timing][unit]") {
  IpuBackend ipu(bow(), "ipu:bow");
  auto unary_cycles = [&](std::int64_t rows, std::int64_t cols, bool timing_only) {
    Problem p;
    Op op = gather_scatter_op("f", OpKind::unary, {rows, cols});
    op.input = p.add_input("x", {rows, cols}, 2);
    op.unary = UnaryFn::exp;
    p.graph.add_op(op);
    return *run_ipu(ipu, p, timing_only).ops[0].cycles;
  };
  CHECK(unary_cycles(100000, 16, true) > unary_cycles(10000, 16, true));
  CHECK(unary_cycles(5000, 8, true) == unary_cycles(5000, 8, false));
  // The scatter family: more messages, or wider ones, cost more.
  auto scatter_cycles = [&](OpKind kind, OpShape shape) {
    Problem p;
    Op op = gather_scatter_op("s", kind, shape);
    if (kind != OpKind::degree_count) op.input = p.add_input("src", {shape.num_inputs, shape.num_features}, 7);
    op.indices = p.add_indices("idx", uniform_indices(shape.num_inputs, shape.num_outputs, 8));
    p.graph.add_op(op);
    return *run_ipu(ipu, p, true).ops[0].cycles;
  };
  for (OpKind kind : {OpKind::scatter_mean, OpKind::scatter_max}) {
    INFO(to_string(kind));
    CHECK(scatter_cycles(kind, {40000, 16, 4000}) > scatter_cycles(kind, {4000, 16, 4000}));
    CHECK(scatter_cycles(kind, {20000, 64, 4000}) > scatter_cycles(kind, {20000, 4, 4000}));
  }
  CHECK(scatter_cycles(OpKind::degree_count, {40000, 1, 4000}) > scatter_cycles(OpKind::degree_count, {4000, 1, 4000}));
  // A mean costs more than a sum of the same shape: it also counts and divides.
  CHECK(scatter_cycles(OpKind::scatter_mean, {20000, 16, 4000}) > scatter_cycles(OpKind::scatter_add, {20000, 16, 4000}));
}

TEST_CASE("an op too large for the IPU is an exit-3 PlanError naming the tile, the bytes and the next step", "[ipu-ops][planner][unit]") {
  OpGraph g;
  const TensorId x = g.add_tensor({"x", {8, 1 << 16}, DType::float32});
  const TensorId w = g.add_tensor({"w", {1 << 16, 1 << 14}, DType::float32});  // a 4 GiB weight
  Op op = gather_scatter_op("huge", OpKind::matmul, {8, 1 << 16, 0, 1 << 14});
  op.input = x;
  op.weight = w;
  g.add_op(op);
  try {
    plan_op(g.ops[0], bow());
    FAIL("a 4 GiB weight was planned onto 900 MB of SRAM");
  } catch (const PlanError& e) {
    const std::string m = e.what();
    CHECK(e.code() == ExitCode::does_not_fit);
    CHECK(m.find("huge") != std::string::npos);
    CHECK(m.find("tile 0") != std::string::npos);
    CHECK(m.find("638976 bytes") != std::string::npos);
    CHECK(m.find("more IPUs") != std::string::npos);
    CHECK(m.find("smaller batch") != std::string::npos);
  }
  // The backend's prepare refuses it before any input is made.
  IpuBackend ipu(bow(), "ipu:bow");
  CHECK_THROWS_AS(ipu.prepare(g), PlanError);
  // An elementwise op over more elements than the chip holds.
  OpGraph g2;
  const TensorId big = g2.add_tensor({"big", {1 << 20, 1 << 9}, DType::float32});  // 2 GiB
  Op act = gather_scatter_op("act", OpKind::unary, {1 << 20, 1 << 9});
  act.input = big;
  g2.add_op(act);
  CHECK_THROWS_AS(plan_op(g2.ops[0], bow()), PlanError);
}
