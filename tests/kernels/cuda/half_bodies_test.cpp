// The CUDA kernels' bodies in float16 and bfloat16 (kernels/cuda/kernel_bodies.hpp instantiated on the
// 16-bit storages), run on the host over emulated launch grids, the launcher's and a small one whose
// grid-stride loops wrap. Each case is one of the CPU tests' op cases turned into the dtype (the
// operands rounded into it, the op's dtype set), its operands held in 16-bit storage; the widened output
// must be values of the dtype that tilesim's reference accepts for an op of that dtype. The matmul goes
// through cuBLAS and needs a GPU.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cuda/emulate.hpp"
#include "kernels/cuda/kernel_bodies.hpp"
#include "tests/support/cpu_op_cases.hpp"
#include "tests/support/cuda_half_support.hpp"
#include "tests/support/dtype_cases.hpp"

using namespace tilesim;
namespace cuda = tilesim::kernels::cuda;
using tilesim_test::OpCase;
using tilesim_test::cuda_half::expect_verified;
using tilesim_test::cuda_half::grids_for;
using tilesim_test::cuda_half::held;
using tilesim_test::cuda_half::unwritten_output;

namespace {

template <class S>
OpCase in_dtype(OpCase c) {
  tilesim_test::convert_to_dtype(c.graph, c.values, S::dtype);
  return c;
}

OpCase gather_case(std::int64_t rows, std::int64_t features, std::int64_t lookups, std::uint32_t seed) {
  tilesim_test::OpCaseBuilder b(seed);
  Op op = tilesim_test::make_op("gather", OpKind::gather, {rows, features, lookups});
  op.input = b.random("table", rows, features);
  op.indices = b.indices("index", b.random_indices(lookups, rows));
  b.add(op);
  return b.take();
}

}  // namespace

TEMPLATE_TEST_CASE("cuda half gather bodies, element and 16-byte vector, copy the table's half values", "[kernels][cuda][unit]",
                   cuda::Float16Storage, cuda::BFloat16Storage) {
  using S = TestType;
  for (const std::int64_t features : {1, 7, 8, 16, 24}) {
    INFO("features=" << features);
    const OpCase c = in_dtype<S>(gather_case(50, features, 300, 1));
    const Op& op = c.op();
    const auto table = held<S>(c.values, op.input);
    const auto& idx = c.values.i32(op.indices);
    const std::int64_t per_vector = cuda::gather_vector_elements<S>();
    REQUIRE(per_vector == 8);  // 16 bytes of 2-byte values
    for (const bool vector : {false, true}) {
      if (vector && features % per_vector != 0) continue;
      for (const auto& grid : grids_for(300 * (vector ? features / per_vector : features))) {
        auto out = unwritten_output<S>(op);
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
          if (vector) cuda::gather_vector_body<S>(t, table.data(), features, idx.data(), 300, out.data());
          else cuda::gather_body<S>(t, table.data(), features, idx.data(), 300, out.data());
        });
        expect_verified<S>(op, c.values, out);
      }
    }
  }
}

TEMPLATE_TEST_CASE("cuda half scatter bodies: sum and mean add into the half output, max compares, empty rows 0", "[kernels][cuda][unit]",
                   cuda::Float16Storage, cuda::BFloat16Storage) {
  using S = TestType;
  struct Shape {
    std::int64_t messages, features, outputs;
  };
  std::mt19937 rng(2);
  // Up to 333 messages a row (the last shape): many half roundings for the sum's bound to cover.
  for (const Shape& s : {Shape{1, 1, 1}, Shape{7, 3, 5}, Shape{50, 4, 300}, Shape{300, 17, 40}, Shape{1000, 8, 3}}) {
    INFO("messages=" << s.messages << " features=" << s.features << " outputs=" << s.outputs);
    const auto idx = tilesim_test::random_indices(s.messages, s.outputs, rng);
    for (const OpKind kind : {OpKind::scatter_add, OpKind::scatter_mean, OpKind::scatter_max}) {
      INFO(to_string(kind));
      const OpCase c = in_dtype<S>(tilesim_test::scatter_case(kind, s.features, s.outputs, idx, 3));
      const Op& op = c.op();
      const auto src = held<S>(c.values, op.input);
      const bool counted = kind != OpKind::scatter_add;
      for (const auto& grid : grids_for(s.messages * s.features)) {
        auto out = unwritten_output<S>(op);
        std::vector<std::int32_t> counts(static_cast<std::size_t>(s.outputs), -7);
        const float identity = kind == OpKind::scatter_max ? -std::numeric_limits<float>::infinity() : 0.0f;
        // The launcher's sequence: fill, fill counts, scatter, finish (each its own launch).
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::fill_body<S>(t, out.data(), static_cast<std::int64_t>(out.size()), identity); });
        if (counted) cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::fill_body(t, counts.data(), s.outputs, 0); });
        const auto scatter_op = kind == OpKind::scatter_max ? cuda::ScatterOp::max : cuda::ScatterOp::add;
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
          cuda::scatter_atomic_body<S>(t, scatter_op, src.data(), s.messages, s.features, idx.data(), out.data(), counted ? counts.data() : nullptr);
        });
        if (counted) {
          cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
            cuda::finish_body<S>(t, kind == OpKind::scatter_mean, counts.data(), s.outputs, s.features, out.data());
          });
        }
        expect_verified<S>(op, c.values, out);
      }
    }
  }
}

TEMPLATE_TEST_CASE("cuda half degree body counts by adding ones into the half output", "[kernels][cuda][unit]", cuda::Float16Storage,
                   cuda::BFloat16Storage) {
  using S = TestType;
  std::mt19937 rng(5);
  // The last case puts about 1500 indices on each of 2 nodes: past 2^8 (bfloat16) and 2^11 (float16),
  // where adding 1 rounds, as PyG's degree() in the dtype does.
  for (const auto& [indices, nodes] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {7, 5}, {300, 40}, {3000, 2}}) {
    INFO("indices=" << indices << " nodes=" << nodes);
    const OpCase c = in_dtype<S>(tilesim_test::degree_case(nodes, tilesim_test::random_indices(indices, nodes, rng)));
    const Op& op = c.op();
    const auto& idx = c.values.i32(op.indices);
    for (const auto& grid : grids_for(indices)) {
      auto out = unwritten_output<S>(op);
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::fill_body<S>(t, out.data(), nodes, 0.0f); });
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::degree_body<S>(t, idx.data(), indices, out.data()); });
      expect_verified<S>(op, c.values, out);
    }
  }
}

TEMPLATE_TEST_CASE("cuda half unary body computes every function in float32 and rounds once", "[kernels][cuda][unit]",
                   cuda::Float16Storage, cuda::BFloat16Storage) {
  using S = TestType;
  const std::pair<UnaryFn, float> fns[] = {{UnaryFn::relu, 0.0f},         {UnaryFn::leaky_relu, 0.2f},    {UnaryFn::shifted_softplus, 0.0f},
                                           {UnaryFn::exp, 0.0f},          {UnaryFn::scale, 1.5f},         {UnaryFn::rsqrt_or_zero, 0.0f},
                                           {UnaryFn::reciprocal_or_zero, 0.0f}, {UnaryFn::cosine_cutoff, 6.0f},
                                           {UnaryFn::sigmoid, 0.0f},            {UnaryFn::softplus, 0.0f},
                                           {UnaryFn::sqrt, 0.0f},               {UnaryFn::log, 0.0f},
                                           {UnaryFn::clamp_min, 1.0f}};
  for (const auto& [fn, scalar] : fns) {
    INFO(to_string(fn));
    OpCase c = tilesim_test::unary_case(fn, scalar, 42, 5, 6, -8.0f, 8.0f);
    // The awkward points, rounded into the dtype with the rest: zeros of both signs, the 6.0 cutoff and
    // its neighbours, a tiny value, and e^x overflowing float16 (e^12) and float32 (e^100).
    std::vector<float> x = c.values.f32(c.op().input);
    const float awkward[] = {0.0f, -0.0f, 6.0f, 5.99f, 6.01f, 40.0f, -40.0f, 1e-6f, -1e-6f, 100.0f, 12.0f};
    for (std::size_t i = 0; i < std::size(awkward); ++i) x[i] = awkward[i];
    c.values.set_f32(c.op().input, x);
    c = in_dtype<S>(std::move(c));
    const Op& op = c.op();
    const auto in = held<S>(c.values, op.input);
    const std::int64_t count = static_cast<std::int64_t>(in.size());
    for (const auto& grid : grids_for(count)) {
      auto out = unwritten_output<S>(op);
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::unary_body<S>(t, fn, scalar, in.data(), count, out.data()); });
      expect_verified<S>(op, c.values, out);
    }
  }
}

TEMPLATE_TEST_CASE("cuda half binary body broadcasts like the float32 one and rounds once", "[kernels][cuda][unit]", cuda::Float16Storage,
                   cuda::BFloat16Storage) {
  using S = TestType;
  struct Broadcast {
    std::int64_t rows, features, other_rows, groups;
  };
  const Broadcast cases[] = {{7, 6, 7, 6}, {7, 6, 7, 1}, {7, 6, 7, 3}, {7, 6, 1, 6}, {300, 16, 300, 8}, {1, 1, 1, 1}, {50, 4, 1, 1}};
  for (BinaryFn fn : {BinaryFn::add, BinaryFn::subtract, BinaryFn::multiply, BinaryFn::divide, BinaryFn::equal}) {
    for (const Broadcast& b : cases) {
      INFO(to_string(fn) << " rows=" << b.rows << " features=" << b.features << " other=" << b.other_rows << "x" << b.groups);
      const OpCase c = in_dtype<S>(tilesim_test::binary_case(fn, b.rows, b.features, b.other_rows, b.groups, 7));
      const Op& op = c.op();
      const auto in = held<S>(c.values, op.input), other = held<S>(c.values, op.weight);
      for (const auto& grid : grids_for(b.rows * b.features)) {
        auto out = unwritten_output<S>(op);
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
          cuda::binary_body<S>(t, fn, in.data(), b.rows, b.features, other.data(), b.other_rows, b.groups, out.data());
        });
        expect_verified<S>(op, c.values, out);
      }
    }
  }
}

TEMPLATE_TEST_CASE("cuda half segment matmul body accumulates in float32, empty segments included", "[kernels][cuda][unit]",
                   cuda::Float16Storage, cuda::BFloat16Storage) {
  using S = TestType;
  const std::vector<std::vector<std::int32_t>> sizes = {{1}, {4, 6}, {0, 4, 0, 6, 0}, {1, 1, 1, 61}, {50, 50, 50, 50}};
  for (const auto& segment_rows : sizes) {
    for (const auto& [depth, cols] : std::vector<std::pair<std::int64_t, std::int64_t>>{{3, 4}, {64, 5}, {8, 33}}) {
      INFO("segments=" << segment_rows.size() << " depth=" << depth << " cols=" << cols);
      const OpCase c = in_dtype<S>(tilesim_test::segment_matmul_case(segment_rows, depth, cols, 8));
      const Op& op = c.op();
      const auto in = held<S>(c.values, op.input), weight = held<S>(c.values, op.weight);
      const auto& offsets = c.values.i32(op.indices);
      const std::int64_t rows = op.shape.num_inputs;
      for (const auto& grid : grids_for(rows * cols)) {
        auto out = unwritten_output<S>(op);
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
          cuda::segment_matmul_body<S>(t, in.data(), rows, depth, offsets.data(), op.shape.num_segments, weight.data(), cols, out.data());
        });
        expect_verified<S>(op, c.values, out);
      }
    }
  }
}
