// The CUDA kernels' per-thread bodies (kernels/cuda/kernel_bodies.hpp), run on the host over emulated
// launch grids and compared with the references: the indexing of every kernel is tested here, where
// no GPU is. Each body runs twice: on the grid its launcher would use (one item per thread), and on a
// deliberately small grid, so the grid-stride loops wrap several times and idle threads occur. The
// device-side atomics and the kernels' speed need a GPU (the cuda backend says so when none is present).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ir/reference/reference.hpp"
#include "ir/reference/reference_ops.hpp"
#include "kernels/cuda/emulate.hpp"
#include "kernels/cuda/kernel_bodies.hpp"
#include "tests/support/cuda_half_support.hpp"
#include "tests/support/random_inputs.hpp"

using namespace tilesim;
namespace cuda = tilesim::kernels::cuda;
namespace reference = tilesim::reference;

namespace {

// The launcher's grid for `items`, and a small one: 3 blocks of 32 threads.
using tilesim_test::cuda_half::grids_for;

using tilesim_test::random_indices;
using tilesim_test::random_values;

std::vector<std::int64_t> offsets_of(const std::vector<std::int32_t>& sorted, std::int64_t segments) {
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(segments + 1), 0);
  for (std::int32_t r : sorted) ++offsets[static_cast<std::size_t>(r) + 1];
  for (std::size_t s = 1; s < offsets.size(); ++s) offsets[s] += offsets[s - 1];
  return offsets;
}

struct BodyShape {
  std::int64_t inputs, features, outputs;
};
const std::vector<BodyShape> kBodyShapes = {{1, 1, 1}, {7, 3, 5}, {50, 4, 300}, {300, 17, 40}, {64, 64, 1000}, {1000, 8, 3}, {5, 2, 0}};

}  // namespace

TEST_CASE("cuda launch_shape covers the items, caps the grid and never launches zero blocks", "[kernels][cuda][unit]") {
  CHECK(cuda::launch_shape(0).blocks == 1);
  CHECK(cuda::launch_shape(1).blocks == 1);
  CHECK(cuda::launch_shape(256).blocks == 1);
  CHECK(cuda::launch_shape(257).blocks == 2);
  CHECK(cuda::launch_shape(std::int64_t{1} << 40).blocks == 65535);  // the grid-stride loop does the rest
  CHECK(cuda::launch_shape(1000, 128).threads_per_block == 128);
  // Every thread of an emulated launch is visited once, with consistent indices.
  std::vector<int> seen(3 * 32, 0);
  cuda::emulate_launch(cuda::launch_shape(1000, 32, 3), [&](const cuda::ThreadIndex& t) {
    CHECK(t.stride() == 96);
    ++seen[static_cast<std::size_t>(t.global())];
  });
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
}

TEST_CASE("cuda gather bodies (scalar and 16-byte vector) copy the reference's bits", "[kernels][cuda][unit]") {
  std::mt19937 rng(1);
  for (const BodyShape& s : kBodyShapes) {
    if (s.inputs == 0) continue;
    INFO("table rows=" << s.inputs << " features=" << s.features << " lookups=" << s.outputs);
    const auto table = random_values(s.inputs * s.features, rng);
    const auto indices = random_indices(s.outputs, s.inputs, rng);
    const auto expected = reference::gather(table, s.features, indices);
    for (const bool vec4 : {false, true}) {
      if (vec4 && s.features % 4 != 0) continue;
      const std::int64_t items = s.outputs * (vec4 ? s.features / 4 : s.features);
      for (const auto& grid : grids_for(items)) {
        std::vector<float> out(expected.size(), std::numeric_limits<float>::quiet_NaN());
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
          if (vec4) cuda::gather_vec4_body(t, table.data(), s.features, indices.data(), s.outputs, out.data());
          else cuda::gather_body(t, table.data(), s.features, indices.data(), s.outputs, out.data());
        });
        CHECK((out.empty() || std::memcmp(out.data(), expected.data(), out.size() * sizeof(float)) == 0));
      }
    }
  }
}

TEST_CASE("cuda scatter bodies (fill, atomic scatter, finish) give sum, mean and max within the reference's bounds", "[kernels][cuda][unit]") {
  std::mt19937 rng(2);
  for (const BodyShape& s : kBodyShapes) {
    if (s.outputs == 0) continue;
    INFO("messages=" << s.inputs << " features=" << s.features << " outputs=" << s.outputs);
    const auto src = random_values(s.inputs * s.features, rng);
    const auto indices = random_indices(s.inputs, s.outputs, rng);
    for (const auto reduce : {reference::Reduction::sum, reference::Reduction::mean, reference::Reduction::max}) {
      INFO("reduce=" << static_cast<int>(reduce));
      const auto expected = reference::scatter_reduce(reduce, src, s.features, indices, s.outputs, 0.0);
      for (const auto& grid : grids_for(s.inputs * s.features)) {
        const bool counted = reduce != reference::Reduction::sum;
        std::vector<float> out(static_cast<std::size_t>(s.outputs * s.features), std::numeric_limits<float>::quiet_NaN());
        std::vector<std::int32_t> counts(static_cast<std::size_t>(s.outputs), -7);
        const float identity = reduce == reference::Reduction::max ? -std::numeric_limits<float>::infinity() : 0.0f;
        // The launcher's sequence: fill, fill counts, scatter, finish (each its own launch).
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::fill_body(t, out.data(), static_cast<std::int64_t>(out.size()), identity); });
        if (counted) cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::fill_body(t, counts.data(), s.outputs, 0); });
        const auto op = reduce == reference::Reduction::max ? cuda::ScatterOp::max : cuda::ScatterOp::add;
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
          cuda::scatter_atomic_body(t, op, src.data(), s.inputs, s.features, indices.data(), out.data(), counted ? counts.data() : nullptr);
        });
        if (counted) {
          cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
            cuda::finish_body(t, reduce == reference::Reduction::mean, counts.data(), s.outputs, s.features, out.data());
          });
        }
        const auto v = reference::check("cuda scatter", s.features, out, expected);
        INFO(v.detail);
        CHECK(v.ok);
      }
    }
  }
}

TEST_CASE("cuda segment body reduces CSR segments, empty ones to 0", "[kernels][cuda][unit]") {
  std::mt19937 rng(3);
  for (const BodyShape& s : kBodyShapes) {
    if (s.outputs == 0) continue;
    INFO("messages=" << s.inputs << " features=" << s.features << " segments=" << s.outputs);
    const auto src = random_values(s.inputs * s.features, rng);
    const auto sorted = random_indices(s.inputs, s.outputs, rng, true);
    const auto offsets = offsets_of(sorted, s.outputs);
    const std::pair<int, reference::Reduction> ops[] = {
        {0, reference::Reduction::sum}, {1, reference::Reduction::mean}, {2, reference::Reduction::max}};
    for (const auto& [op, reduce] : ops) {
      const auto expected = reference::segment_reduce(reduce, src, s.features, offsets, 0.0);
      for (const auto& grid : grids_for(s.outputs * s.features)) {
        std::vector<float> out(static_cast<std::size_t>(s.outputs * s.features), std::numeric_limits<float>::quiet_NaN());
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
          cuda::segment_body(t, op, src.data(), s.features, offsets.data(), s.outputs, out.data());
        });
        const auto v = reference::check("cuda segment", s.features, out, expected);
        INFO(v.detail);
        CHECK(v.ok);
      }
    }
  }
}

TEST_CASE("cuda SpMM bodies, atomic over any edge order and owner-computes over CSR, agree with the reference", "[kernels][cuda][unit]") {
  std::mt19937 rng(4);
  for (const BodyShape& s : kBodyShapes) {
    if (s.outputs == 0) continue;
    const std::int64_t nodes = s.outputs, edges = s.inputs;
    INFO("nodes=" << nodes << " features=" << s.features << " edges=" << edges);
    const auto x = random_values(nodes * s.features, rng);
    const auto weights = random_values(edges, rng);
    const auto src = random_indices(edges, nodes, rng);
    const auto dst_sorted = random_indices(edges, nodes, rng, true);
    const auto expected = reference::gather_scale_scatter(x, s.features, src, dst_sorted, weights, nodes, 0.0);
    for (const auto& grid : grids_for(edges * s.features)) {
      std::vector<float> out(static_cast<std::size_t>(nodes * s.features), std::numeric_limits<float>::quiet_NaN());
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::fill_body(t, out.data(), static_cast<std::int64_t>(out.size()), 0.0f); });
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
        cuda::spmm_atomic_body(t, x.data(), s.features, src.data(), dst_sorted.data(), weights.data(), edges, out.data());
      });
      const auto v = reference::check("cuda spmm atomic", s.features, out, expected);
      INFO(v.detail);
      CHECK(v.ok);
    }
    const auto offsets = offsets_of(dst_sorted, nodes);
    for (const auto& grid : grids_for(nodes * s.features)) {
      std::vector<float> out(static_cast<std::size_t>(nodes * s.features), std::numeric_limits<float>::quiet_NaN());
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
        cuda::spmm_csr_body(t, x.data(), s.features, offsets.data(), src.data(), weights.data(), nodes, out.data());
      });
      const auto v = reference::check("cuda spmm csr", s.features, out, expected);
      INFO(v.detail);
      CHECK(v.ok);
    }
  }
}

TEST_CASE("cuda atomic_max emulation keeps the larger value, negatives included", "[kernels][cuda][unit]") {
  float x = -std::numeric_limits<float>::infinity();
  for (float v : {-3.0f, -5.0f, -0.5f, -2.0f}) cuda::atomic_max(&x, v);
  CHECK(x == -0.5f);
  cuda::atomic_max(&x, 2.0f);
  CHECK(x == 2.0f);
  CHECK(cuda::bits_to_float(0xFF800000u) == -std::numeric_limits<float>::infinity());
}

// ---- The GNN op kinds: degree count, unary, binary with broadcast, segment matmul. Each body runs on
// both grids and its output goes through reference::verify, the check every backend's outputs pass.

namespace {

// A one-op graph over fresh input tensors, and the values of those inputs.
struct BodyCase {
  OpGraph graph;
  TensorValues values;
  const Op& op() const { return graph.ops.back(); }
};

TensorId f32_input(BodyCase& c, std::vector<std::int64_t> shape, std::vector<float> values) {
  const TensorId id = c.graph.add_tensor({"x", std::move(shape), DType::float32});
  c.values.set_f32(id, std::move(values));
  return id;
}

TensorId i32_input(BodyCase& c, std::int64_t n, std::vector<std::int32_t> values) {
  const TensorId id = c.graph.add_tensor({"i", {n}, DType::int32});
  c.values.set_i32(id, std::move(values));
  return id;
}

void expect_verified(const BodyCase& c, const std::vector<float>& out) {
  const reference::Verification v = reference::verify(c.op(), c.values, out);
  INFO(v.detail);
  CHECK(v.ok);
}

std::vector<float> nan_output(const Op& op) {
  return std::vector<float>(static_cast<std::size_t>(op.output_rows() * op.output_cols()), std::numeric_limits<float>::quiet_NaN());
}

}  // namespace

TEST_CASE("cuda degree body counts indices per node, zero where none", "[kernels][cuda][unit]") {
  std::mt19937 rng(5);
  for (const BodyShape& s : kBodyShapes) {
    if (s.outputs == 0) continue;
    INFO("indices=" << s.inputs << " nodes=" << s.outputs);
    BodyCase c;
    Op op;
    op.name = "degree";
    op.kind = OpKind::degree_count;
    op.shape = OpShape{s.inputs, 1, s.outputs};
    op.indices = i32_input(c, s.inputs, random_indices(s.inputs, s.outputs, rng));
    c.graph.add_op(op);
    const auto& idx = c.values.i32(c.op().indices);
    for (const auto& grid : grids_for(s.inputs)) {
      auto out = nan_output(c.op());
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::fill_body(t, out.data(), s.outputs, 0.0f); });
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::degree_body(t, idx.data(), s.inputs, out.data()); });
      expect_verified(c, out);
    }
  }
}

TEST_CASE("cuda unary body computes every function within the reference's bounds", "[kernels][cuda][unit]") {
  std::mt19937 rng(6);
  // Values over [-8, 8] with the awkward points: zeros of both signs, the 6.0 cutoff, large magnitudes.
  std::vector<float> x;
  std::uniform_real_distribution<float> d(-8.0f, 8.0f);
  for (int i = 0; i < 200; ++i) x.push_back(d(rng));
  for (float v : {0.0f, -0.0f, 6.0f, 5.999f, 6.001f, 40.0f, -40.0f, 1e-30f, -1e-30f, 100.0f}) x.push_back(v);
  const std::int64_t rows = static_cast<std::int64_t>(x.size()) / 5;  // 5 features
  const std::pair<UnaryFn, float> fns[] = {{UnaryFn::relu, 0.0f},         {UnaryFn::leaky_relu, 0.2f},    {UnaryFn::shifted_softplus, 0.0f},
                                           {UnaryFn::exp, 0.0f},          {UnaryFn::scale, 1.5f},         {UnaryFn::rsqrt_or_zero, 0.0f},
                                           {UnaryFn::reciprocal_or_zero, 0.0f}, {UnaryFn::cosine_cutoff, 6.0f},
                                           {UnaryFn::sigmoid, 0.0f},            {UnaryFn::softplus, 0.0f},
                                           {UnaryFn::sqrt, 0.0f},               {UnaryFn::log, 0.0f},
                                           {UnaryFn::clamp_min, 1.0f}};
  for (const auto& [fn, scalar] : fns) {
    INFO(to_string(fn));
    BodyCase c;
    Op op;
    op.name = "f";
    op.kind = OpKind::unary;
    op.unary = fn;
    op.scalar = scalar;
    op.shape.num_inputs = rows;
    op.shape.num_features = 5;
    op.input = f32_input(c, {rows, 5}, x);
    c.graph.add_op(op);
    for (const auto& grid : grids_for(rows * 5)) {
      auto out = nan_output(c.op());
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::unary_body(t, fn, scalar, x.data(), rows * 5, out.data()); });
      expect_verified(c, out);
    }
  }
  // Spot values: the cutoff is 0 from the cutoff on, and 1 at 0; rsqrt and reciprocal mask their poles.
  CHECK(cuda::unary_value(UnaryFn::cosine_cutoff, 6.0f, 6.0f) == 0.0f);
  CHECK(cuda::unary_value(UnaryFn::cosine_cutoff, 0.0f, 6.0f) == 1.0f);
  CHECK(cuda::unary_value(UnaryFn::rsqrt_or_zero, 0.0f, 0.0f) == 0.0f);
  CHECK(cuda::unary_value(UnaryFn::rsqrt_or_zero, -4.0f, 0.0f) == 0.0f);
  CHECK(cuda::unary_value(UnaryFn::reciprocal_or_zero, 0.0f, 0.0f) == 0.0f);
  CHECK(cuda::unary_value(UnaryFn::shifted_softplus, 0.0f, 0.0f) == Approx(0.0f).margin(1e-7));
}

TEST_CASE("cuda binary body broadcasts a row, a per-row scalar, per-head groups and a full operand", "[kernels][cuda][unit]") {
  std::mt19937 rng(7);
  struct Broadcast {
    std::int64_t rows, features, other_rows, groups;
  };
  const Broadcast cases[] = {{7, 6, 7, 6}, {7, 6, 7, 1}, {7, 6, 7, 3}, {7, 6, 1, 6}, {300, 16, 300, 8}, {1, 1, 1, 1}, {50, 4, 1, 1}};
  for (BinaryFn fn : {BinaryFn::add, BinaryFn::subtract, BinaryFn::multiply, BinaryFn::divide, BinaryFn::equal}) {
    for (const Broadcast& b : cases) {
      INFO(to_string(fn) << " rows=" << b.rows << " features=" << b.features << " other=" << b.other_rows << "x" << b.groups);
      BodyCase c;
      Op op;
      op.name = "b";
      op.kind = OpKind::binary;
      op.binary = fn;
      op.shape.num_inputs = b.rows;
      op.shape.num_features = b.features;
      op.shape.other_rows = b.other_rows;
      op.shape.other_groups = b.groups;
      op.input = f32_input(c, {b.rows, b.features}, random_values(b.rows * b.features, rng));
      op.weight = f32_input(c, {b.other_rows, b.groups}, random_values(b.other_rows * b.groups, rng));
      c.graph.add_op(op);
      const auto& in = c.values.f32(c.op().input);
      const auto& other = c.values.f32(c.op().weight);
      for (const auto& grid : grids_for(b.rows * b.features)) {
        auto out = nan_output(c.op());
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
          cuda::binary_body(t, fn, in.data(), b.rows, b.features, other.data(), b.other_rows, b.groups, out.data());
        });
        expect_verified(c, out);
      }
    }
  }
}

TEST_CASE("cuda segment matmul body uses each row's segment weight, empty segments included", "[kernels][cuda][unit]") {
  std::mt19937 rng(8);
  struct Seg {
    std::int64_t rows, depth, cols;
    std::vector<std::int32_t> offsets;
  };
  const Seg cases[] = {
      {1, 1, 1, {0, 1}},
      {10, 3, 4, {0, 4, 10}},
      {10, 3, 4, {0, 0, 4, 4, 10, 10}},  // empty first, middle and last segments
      {64, 17, 5, {0, 1, 2, 3, 64}},
      {200, 8, 33, {0, 50, 100, 150, 200}},
  };
  for (const Seg& g : cases) {
    const std::int64_t segments = static_cast<std::int64_t>(g.offsets.size()) - 1;
    INFO("rows=" << g.rows << " depth=" << g.depth << " cols=" << g.cols << " segments=" << segments);
    BodyCase c;
    Op op;
    op.name = "segmm";
    op.kind = OpKind::segment_matmul;
    op.shape.num_inputs = g.rows;
    op.shape.num_features = g.depth;
    op.shape.out_features = g.cols;
    op.shape.num_segments = segments;
    op.input = f32_input(c, {g.rows, g.depth}, random_values(g.rows * g.depth, rng));
    op.indices = i32_input(c, segments + 1, g.offsets);
    op.weight = f32_input(c, {segments, g.depth, g.cols}, random_values(segments * g.depth * g.cols, rng));
    c.graph.add_op(op);
    const auto& in = c.values.f32(c.op().input);
    const auto& w = c.values.f32(c.op().weight);
    for (std::int64_t r = 0; r < g.rows; ++r) {
      const std::int64_t s = cuda::segment_of(g.offsets.data(), segments, r);
      CHECK((g.offsets[static_cast<std::size_t>(s)] <= r && r < g.offsets[static_cast<std::size_t>(s) + 1]));
    }
    for (const auto& grid : grids_for(g.rows * g.cols)) {
      auto out = nan_output(c.op());
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
        cuda::segment_matmul_body(t, in.data(), g.rows, g.depth, g.offsets.data(), segments, w.data(), g.cols, out.data());
      });
      expect_verified(c, out);
    }
  }
}
