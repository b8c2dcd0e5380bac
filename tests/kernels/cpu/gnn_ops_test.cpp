// The CPU backend on the op kinds GNN layers lower to (scatter mean/max, degree count, matmul, segment
// matmul, unary and binary elementwise ops), each verified against the reference on small shapes on
// both sides of the kernels' serial/parallel thresholds, with the edge cases: rows nobody scatters to,
// empty segments, every broadcast shape, a bias; and a chained graph whose ops read earlier outputs.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "ir/reference/reference.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/cpu/elementwise.hpp"
#include "tests/support/cpu_op_cases.hpp"

using namespace tilesim;
using namespace tilesim_test;
namespace reference = tilesim::reference;

namespace {

RunOptions quick() {
  RunOptions o;
  o.warmup = 0;
  o.repeats = 2;  // a second call over the same output catches a kernel that accumulates instead of writing
  return o;
}

// Runs the case's graph on the CPU backend; every op must be verified.
const std::vector<float>& run_verified(kernels::cpu::CpuBackend& cpu, const OpCase& c) {
  const BackendResult r = cpu.run(c.graph, c.values, quick());
  REQUIRE(r.ops.size() == c.graph.ops.size());
  for (const OpResult& row : r.ops) {
    INFO(row.verification);
    CHECK(row.verified == true);
    CHECK(row.flops == c.graph.ops[&row - r.ops.data()].flops());
  }
  return cpu.outputs().f32(c.op().output);
}

}  // namespace

TEST_CASE("cpu scatter_mean and scatter_max match the reference, 0 in rows nobody scatters to", "[cpu][gnn-ops][unit]") {
  kernels::cpu::CpuBackend cpu;
  for (OpKind kind : {OpKind::scatter_mean, OpKind::scatter_max}) {
    // Small (serial), sorted (segments) and large (threads: > 256 KiB of messages).
    struct Shape {
      std::int64_t messages, features, outputs;
      bool sorted;
    };
    for (const Shape& s : {Shape{30, 3, 50, false}, Shape{200, 16, 40, true}, Shape{6000, 24, 3000, false}}) {
      INFO(to_string(kind) << " " << s.messages << " x " << s.features << " -> " << s.outputs);
      OpCaseBuilder b(11);
      // Only even rows receive messages: the odd ones must come out 0.
      auto idx = b.random_indices(s.messages, s.outputs / 2, s.sorted);
      for (auto& i : idx) i *= 2;
      const OpCase c = scatter_case(kind, s.features, s.outputs, idx, 12);
      const auto& out = run_verified(cpu, c);
      for (std::int64_t f = 0; f < s.features; ++f) CHECK(out[static_cast<std::size_t>(1 * s.features + f)] == 0.0f);
    }
  }
}

TEST_CASE("cpu degree_count matches the reference on the serial, histogram and atomic paths", "[cpu][gnn-ops][unit]") {
  kernels::cpu::CpuBackend cpu;
  OpCaseBuilder b(5);
  run_verified(cpu, degree_case(10, b.random_indices(37, 10)));
  run_verified(cpu, degree_case(1000, b.random_indices(200000, 1000)));  // many edges per node: per-thread counts
  run_verified(cpu, degree_case(90000, b.random_indices(40000, 90000)));  // more nodes than edges: shared counts
  const OpCase all_one = degree_case(3, std::vector<std::int32_t>(70000, 1));
  CHECK(run_verified(cpu, all_one) == std::vector<float>{0, 70000, 0});
}

TEST_CASE("cpu matmul matches the reference with and without a bias", "[cpu][gnn-ops][unit]") {
  kernels::cpu::CpuBackend cpu;
  run_verified(cpu, matmul_case(1, 1, 1, false, 1));
  run_verified(cpu, matmul_case(7, 5, 3, true, 2));
  run_verified(cpu, matmul_case(300, 64, 16, true, 3));
  run_verified(cpu, matmul_case(120, 33, 47, false, 4));
}

TEST_CASE("cpu segment_matmul matches the reference with empty, small and large segments", "[cpu][gnn-ops][unit]") {
  kernels::cpu::CpuBackend cpu;
  run_verified(cpu, segment_matmul_case({1}, 3, 2, 1));
  run_verified(cpu, segment_matmul_case({0, 5, 0, 2, 0}, 4, 3, 2));          // empty segments, row loop
  run_verified(cpu, segment_matmul_case({40, 3, 0, 100, 31}, 16, 8, 3));     // SGEMM and row loop mixed
  run_verified(cpu, segment_matmul_case(std::vector<std::int32_t>(300, 20), 32, 24, 4));  // many small ones, threads
}

TEST_CASE("cpu unary functions match the reference, serial and threaded, with extreme inputs", "[cpu][gnn-ops][unit]") {
  kernels::cpu::CpuBackend cpu;
  for (UnaryFn fn : {UnaryFn::relu, UnaryFn::leaky_relu, UnaryFn::shifted_softplus, UnaryFn::exp, UnaryFn::scale,
                     UnaryFn::rsqrt_or_zero, UnaryFn::reciprocal_or_zero, UnaryFn::cosine_cutoff, UnaryFn::sigmoid, UnaryFn::softplus,
                     UnaryFn::sqrt, UnaryFn::log, UnaryFn::clamp_min}) {
    INFO(to_string(fn));
    const float scalar = fn == UnaryFn::leaky_relu ? 0.2f : fn == UnaryFn::cosine_cutoff ? 6.0f : 1.5f;
    run_verified(cpu, unary_case(fn, scalar, 13, 7, 1, -8.0f, 8.0f));
    run_verified(cpu, unary_case(fn, scalar, 4000, 20, 2, -8.0f, 8.0f));  // 320 KB in: threads
    // Beyond float's exp range, near and past the cutoff, around zero.
    OpCase c = unary_case(fn, scalar, 1, 16, 3);
    c.values.set_f32(c.op().input, {-200, -104, -100, -90, -87.5f, -20, -1e-6f, 0, -0.0f, 1e-6f, 5.999f, 6, 20, 88, 89, 200});
    run_verified(cpu, c);
  }
}

TEST_CASE("cpu exp stays within 1 ulp of the exact value over float's whole range", "[cpu][gnn-ops][unit]") {
  // A dense sweep of inputs, including the subnormal results below -87.3; the stated bound of the
  // reference is 4 ulp, the kernel's design 1.
  std::vector<float> x;
  for (float v = -104.0f; v < 89.0f; v += 0.0137f) x.push_back(v);
  std::vector<float> out(x.size());
  kernels::cpu::unary_f32(UnaryFn::exp, 0, x.data(), static_cast<std::int64_t>(x.size()), out.data());
  int worst_ulps = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float exact = static_cast<float>(std::exp(static_cast<double>(x[i])));
    int ulps = 0;
    for (float y = out[i]; y != exact && ulps < 100; ++ulps) y = std::nextafter(y, exact);
    worst_ulps = std::max(worst_ulps, ulps);
  }
  CHECK(worst_ulps <= 1);
}

TEST_CASE("cpu binary ops match the reference for every broadcast shape", "[cpu][gnn-ops][unit]") {
  kernels::cpu::CpuBackend cpu;
  for (BinaryFn fn : {BinaryFn::add, BinaryFn::subtract, BinaryFn::multiply, BinaryFn::divide, BinaryFn::equal}) {
    INFO(to_string(fn));
    run_verified(cpu, binary_case(fn, 9, 8, 9, 8, 1));     // same shape
    run_verified(cpu, binary_case(fn, 9, 8, 9, 1, 2));     // per-row scalar (edge weight)
    run_verified(cpu, binary_case(fn, 9, 8, 9, 4, 3));     // per-head scalar (GAT, 4 heads of 2)
    run_verified(cpu, binary_case(fn, 9, 8, 1, 8, 4));     // a bias row
    run_verified(cpu, binary_case(fn, 9, 8, 1, 1, 5));     // one scalar
    run_verified(cpu, binary_case(fn, 5000, 16, 5000, 2, 6));  // threads
  }
}

TEST_CASE("cpu backend runs a chained graph: each op reads the one before, every op verified", "[cpu][gnn-ops][unit]") {
  // A GCN-like chain: h = relu(x W + b); m = h[src] * w_e; out = mean over dst of m; deg = degree(dst).
  OpCaseBuilder b(21);
  const std::int64_t nodes = 40, edges = 150, in = 12, hidden = 8;
  OpShape lin_shape;
  lin_shape.num_inputs = nodes;
  lin_shape.num_features = in;
  lin_shape.out_features = hidden;
  Op lin = make_op("lin", OpKind::matmul, lin_shape);
  lin.input = b.random("x", nodes, in);
  lin.weight = b.random("W", in, hidden);
  lin.bias = b.random("b", hidden, 0);
  const TensorId h0 = b.add(lin);

  Op act = make_op("act", OpKind::unary, {nodes, hidden, 0});
  act.unary = UnaryFn::relu;
  act.input = h0;
  const TensorId h = b.add(act);

  Op gather = make_op("gather", OpKind::gather, {nodes, hidden, edges});
  gather.input = h;
  gather.indices = b.indices("src", b.random_indices(edges, nodes));
  const TensorId msg = b.add(gather);

  OpShape scale_shape;
  scale_shape.num_inputs = edges;
  scale_shape.num_features = hidden;
  scale_shape.other_rows = edges;
  scale_shape.other_groups = 1;
  Op scale = make_op("edge_weight", OpKind::binary, scale_shape);
  scale.binary = BinaryFn::multiply;
  scale.input = msg;
  scale.weight = b.random("w_e", edges, 1, 0.0f, 1.0f);
  const TensorId weighted = b.add(scale);

  const TensorId dst = b.indices("dst", b.random_indices(edges, nodes));
  Op mean = make_op("aggregate", OpKind::scatter_mean, {edges, hidden, nodes});
  mean.input = weighted;
  mean.indices = dst;
  b.add(mean);
  Op deg = make_op("degree", OpKind::degree_count, {edges, 1, nodes});
  deg.indices = dst;
  b.add(deg);
  const OpCase c = b.take();

  kernels::cpu::CpuBackend cpu;
  run_verified(cpu, c);
  // Against the reference chained on its own outputs: the relu output feeds a gather bitwise, so the
  // CPU's and the reference's chains may differ only by the rounding of the matmul and what follows.
  TensorValues ref = c.values;
  for (const Op& op : c.graph.ops) ref.set_f32(op.output, reference::compute(op, ref));
  const auto& got = cpu.outputs().f32(c.graph.ops[4].output);
  const auto& want = ref.f32(c.graph.ops[4].output);
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-5).margin(1e-6));
  CHECK(cpu.outputs().f32(c.graph.ops[5].output) == ref.f32(c.graph.ops[5].output));
}

TEST_CASE("cpu backend rejects operands that do not fit the op, naming it", "[cpu][gnn-ops][unit]") {
  kernels::cpu::CpuBackend cpu;
  OpCase c = segment_matmul_case({2, 2}, 3, 2, 1);
  c.values.set_i32(c.op().indices, {0, 3, 2});
  CHECK_THROWS_WITH(cpu.run(c.graph, c.values, quick()),
                    Catch::Contains("cpu backend: op 'segment_linear'") && Catch::Contains("offsets decrease"));
}
