// The CUDA training kernels' bodies in float16 and bfloat16 (kernels/cuda/training_bodies.hpp on the
// 16-bit storages), run on the host over emulated launch grids, the launcher's and a small one whose
// grid-stride loops wrap. Each graph is built in float32 as the float32 tests build it, then turned into
// the dtype (operands rounded into it; a loss's row weights stay float32); the widened outputs must be
// values of the dtype that tilesim's reference accepts for ops of that dtype. The transposed matmuls
// go through cuBLAS and need a GPU.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cuda/emulate.hpp"
#include "kernels/cuda/training_bodies.hpp"
#include "tests/support/cuda_half_support.hpp"
#include "tests/support/dtype_cases.hpp"
#include "tests/support/graph_case.hpp"
#include "tests/support/random_inputs.hpp"
#include "workloads/layers/layers.hpp"

using namespace tilesim;
namespace cuda = tilesim::kernels::cuda;
using tilesim_test::random_values;
using tilesim_test::cuda_half::expect_verified;
using tilesim_test::cuda_half::grids_for;
using tilesim_test::cuda_half::held;
using tilesim_test::cuda_half::unwritten_output;

namespace {

using Case = tilesim_test::GraphCase;

Op op_of(OpKind kind, std::int64_t rows, std::int64_t cols) {
  Op op;
  op.name = "op";
  op.kind = kind;
  op.shape.num_inputs = rows;
  op.shape.num_features = cols;
  return op;
}

// The graph's ops and values in the dtype of S.
template <class S>
void in_dtype(Case& c) {
  tilesim_test::convert_to_dtype(c.graph, c.values, S::dtype);
}

}  // namespace

TEMPLATE_TEST_CASE("cuda half unary_grad body: every derivative in float32, rounded once", "[kernels][cuda][training][unit]",
                   cuda::Float16Storage, cuda::BFloat16Storage) {
  using S = TestType;
  std::mt19937 rng(11);
  std::vector<float> x = random_values(300, rng, -4.0f, 4.0f);
  for (float v : {0.0f, -0.0f, 6.0f, 5.99f, 25.0f, -30.0f, 1e-3f}) x.push_back(v);
  const std::int64_t rows = static_cast<std::int64_t>(x.size());
  const std::vector<float> g = random_values(rows, rng);
  const std::pair<UnaryFn, float> fns[] = {{UnaryFn::relu, 0.0f},         {UnaryFn::leaky_relu, 0.2f},    {UnaryFn::shifted_softplus, 0.0f},
                                           {UnaryFn::exp, 0.0f},          {UnaryFn::scale, 1.5f},         {UnaryFn::rsqrt_or_zero, 0.0f},
                                           {UnaryFn::reciprocal_or_zero, 0.0f}, {UnaryFn::cosine_cutoff, 6.0f},
                                           {UnaryFn::sigmoid, 0.0f},            {UnaryFn::softplus, 0.0f},
                                           {UnaryFn::sqrt, 0.0f},               {UnaryFn::log, 0.0f},
                                           {UnaryFn::clamp_min, 1.0f}};
  for (const auto& [fn, scalar] : fns) {
    INFO(to_string(fn));
    Case c;
    Op op = op_of(OpKind::unary_grad, rows, 1);
    op.unary = fn;
    op.scalar = scalar;
    op.input = c.f32("x", {rows, 1}, x);
    op.weight = c.f32("g", {rows, 1}, g);
    c.add(op);
    in_dtype<S>(c);
    const Op& added = c.graph.ops.back();
    const auto hx = held<S>(c.values, added.input), hg = held<S>(c.values, added.weight);
    for (const auto& grid : grids_for(rows)) {
      auto out = unwritten_output<S>(added);
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::unary_grad_body<S>(t, fn, scalar, hx.data(), hg.data(), rows, out.data()); });
      expect_verified<S>(added, c.values, out);
    }
  }
}

TEMPLATE_TEST_CASE("cuda half sum_to bodies: direct sums, and float32 chunk partials summed into the half output",
                   "[kernels][cuda][training][unit]", cuda::Float16Storage, cuda::BFloat16Storage) {
  using S = TestType;
  std::mt19937 rng(12);
  SECTION("direct") {
    const std::int64_t rows = 37, cols = 12;
    const std::vector<float> x = random_values(rows * cols, rng);
    for (const auto& [other_rows, groups] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 12}, {1, 3}, {1, 1}, {37, 1}, {37, 4}}) {
      INFO(other_rows << " x " << groups);
      Case c;
      Op op = op_of(OpKind::sum_to, rows, cols);
      op.shape.other_rows = other_rows;
      op.shape.other_groups = groups;
      op.input = c.f32("x", {rows, cols}, x);
      c.add(op);
      in_dtype<S>(c);
      const Op& added = c.graph.ops.back();
      const auto hx = held<S>(c.values, added.input);
      for (const auto& grid : grids_for(other_rows * groups)) {
        auto out = unwritten_output<S>(added);
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::sum_to_body<S>(t, hx.data(), rows, cols, other_rows, groups, out.data()); });
        expect_verified<S>(added, c.values, out);
      }
    }
  }
  SECTION("chunked, as the launcher runs a tall column sum") {
    const std::int64_t rows = 3 * cuda::kSumToChunkRows + 17, cols = 6;  // a ragged last chunk
    const std::vector<float> x = random_values(rows * cols, rng);
    for (std::int64_t groups : {6, 2}) {
      Case c;
      Op op = op_of(OpKind::sum_to, rows, cols);
      op.shape.other_rows = 1;
      op.shape.other_groups = groups;
      op.input = c.f32("x", {rows, cols}, x);
      c.add(op);
      in_dtype<S>(c);
      const Op& added = c.graph.ops.back();
      const auto hx = held<S>(c.values, added.input);
      const std::int64_t chunks = cuda::sum_to_chunks(rows);
      for (const auto& grid : grids_for(chunks * cols)) {
        std::vector<float> partial(static_cast<std::size_t>(chunks * cols), std::numeric_limits<float>::quiet_NaN());
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
          cuda::column_partials_body<S>(t, hx.data(), rows, cols, cuda::kSumToChunkRows, partial.data());
        });
        auto out = unwritten_output<S>(added);
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
          cuda::sum_to_body<cuda::Float32Storage, S>(t, partial.data(), chunks, cols, 1, groups, out.data());
        });
        expect_verified<S>(added, c.values, out);
      }
    }
  }
}

TEMPLATE_TEST_CASE("cuda half loss bodies: cross entropy and mse, plain and weighted, their means and gradients",
                   "[kernels][cuda][training][unit]", cuda::Float16Storage, cuda::BFloat16Storage) {
  using S = TestType;
  std::mt19937 rng(13);
  const std::int64_t rows = 45, cols = 7;
  std::vector<float> x = random_values(rows * cols, rng, -3.0f, 3.0f);
  x[3] = 30.0f;  // a large logit: the max shift keeps e^x finite (e^30 is beyond float16)
  std::vector<std::int32_t> labels(static_cast<std::size_t>(rows));
  for (std::size_t r = 0; r < labels.size(); ++r) labels[r] = static_cast<std::int32_t>((r * 5) % cols);
  const std::vector<float> targets = random_values(rows * cols, rng);
  const std::vector<float> weights = random_values(rows, rng, 0.05f, 3.0f);
  for (LossFn fn : {LossFn::cross_entropy, LossFn::mse}) {
    for (const bool weighted : {false, true}) {
      INFO(to_string(fn) << (weighted ? " weighted" : ""));
      Case c;
      Op loss = op_of(OpKind::loss, rows, cols);
      loss.loss = fn;
      loss.input = c.f32("x", {rows, cols}, x);
      if (fn == LossFn::cross_entropy) loss.indices = c.i32("labels", labels);
      else loss.weight = c.f32("t", {rows, cols}, targets);
      if (weighted) loss.aux = c.f32("w", {rows}, weights);
      c.add(loss);
      Op grad = c.graph.ops.back();
      grad.name = "grad";
      grad.kind = OpKind::loss_grad;
      c.add(grad);
      in_dtype<S>(c);
      const Op& loss_op = c.graph.ops[0];
      const Op& grad_op = c.graph.ops[1];
      REQUIRE((!weighted || c.graph.tensors[static_cast<std::size_t>(loss_op.aux)].dtype == DType::float32));
      const auto hx = held<S>(c.values, loss_op.input);
      const auto ht = fn == LossFn::mse ? held<S>(c.values, loss_op.weight) : std::vector<typename S::type>{};
      const std::int32_t* l = fn == LossFn::cross_entropy ? labels.data() : nullptr;
      const typename S::type* t = fn == LossFn::mse ? ht.data() : nullptr;
      const float* w = weighted ? c.values.f32(loss_op.aux).data() : nullptr;
      for (const auto& grid : grids_for(rows)) {
        // The launcher's sequence: row losses (float32), then the weights' sum and the weighted mean, or
        // the plain mean, into the half output; the gradient after the weights' sum.
        std::vector<float> row_loss(static_cast<std::size_t>(rows), std::numeric_limits<float>::quiet_NaN());
        std::vector<float> sum = {std::numeric_limits<float>::quiet_NaN()};
        auto out = unwritten_output<S>(loss_op);
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& th) { cuda::loss_rows_body<S>(th, fn, hx.data(), rows, cols, l, t, row_loss.data(), w); });
        if (weighted) {
          cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& th) { cuda::weight_sum_body(th, w, rows, sum.data()); });
          const float cols_per_term = static_cast<float>(fn == LossFn::cross_entropy ? 1 : cols);
          cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& th) {
            cuda::weighted_loss_mean_body<S>(th, row_loss.data(), rows, cols_per_term, sum.data(), out.data());
          });
        } else {
          const float count = static_cast<float>(fn == LossFn::cross_entropy ? rows : rows * cols);
          cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& th) { cuda::loss_mean_body<S>(th, row_loss.data(), rows, count, out.data()); });
        }
        expect_verified<S>(loss_op, c.values, out);
        auto g = unwritten_output<S>(grad_op);
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& th) {
          cuda::loss_grad_body<S>(th, fn, hx.data(), rows, cols, l, t, g.data(), w, weighted ? sum.data() : nullptr);
        });
        expect_verified<S>(grad_op, c.values, g);
      }
    }
  }
}

TEMPLATE_TEST_CASE("cuda half optimizer body: SGD (plain and momentum) and Adam over two steps, half parameters and state",
                   "[kernels][cuda][training][unit]", cuda::Float16Storage, cuda::BFloat16Storage) {
  using S = TestType;
  std::mt19937 rng(14);
  const std::int64_t count = 301;
  const std::vector<float> p = random_values(count, rng), g = random_values(count, rng);
  OptimizerSpec plain;
  plain.lr = 0.1;
  plain.weight_decay = 0.01;
  OptimizerSpec momentum = plain;
  momentum.momentum = 0.9;
  OptimizerSpec adam;
  adam.kind = OptimizerSpec::Kind::adam;
  adam.lr = 0.01;
  adam.weight_decay = 5e-4;
  for (const OptimizerSpec& spec : {plain, momentum, adam}) {
    INFO(to_string(spec.kind) << " momentum " << spec.momentum);
    const std::int64_t rows = spec.state_rows();
    std::vector<float> params = p, state(static_cast<std::size_t>(rows * count), 0.0f);
    for (int step = 1; step <= 2; ++step) {
      INFO("step " << step);
      Case c;
      Op op = op_of(OpKind::optimizer_step, 1, count);
      op.optimizer = spec;
      op.input = c.f32("p", {count}, params);
      op.weight = c.f32("g", {1, count}, g);
      if (rows > 0) op.bias = c.f32("s", {rows, count}, state);
      op.aux = c.f32("t", {1, 1}, {static_cast<float>(step)});
      c.add(op);
      in_dtype<S>(c);
      const Op& added = c.graph.ops.back();
      const auto hp = held<S>(c.values, added.input), hg = held<S>(c.values, added.weight);
      const auto hs = rows > 0 ? held<S>(c.values, added.bias) : std::vector<typename S::type>{};
      std::vector<typename S::type> out;
      for (const auto& grid : grids_for(count)) {
        out = unwritten_output<S>(added);
        const cuda::OptimizerScalars s = cuda::optimizer_scalars(spec, step);
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
          cuda::optimizer_step_body<S>(t, s, hp.data(), hg.data(), rows > 0 ? hs.data() : nullptr, count, out.data());
        });
        expect_verified<S>(added, c.values, out);
      }
      // The next step starts from this one's half parameters and state, as a half training run holds them.
      const std::vector<float> next = cuda::widened<S>(out);
      std::copy(next.begin(), next.begin() + count, params.begin());
      std::copy(next.begin() + count, next.end(), state.begin());
    }
    CHECK(params != p);
  }
}

TEMPLATE_TEST_CASE("cuda half segment_matmul backward bodies: both transposed forms, an empty segment 0", "[kernels][cuda][training][unit]",
                   cuda::Float16Storage, cuda::BFloat16Storage) {
  using S = TestType;
  std::mt19937 rng(21);
  // Segments of 9, 0, 1 and 13 rows; the forward's x [23, 6] @ W [4, 6, 5].
  const std::vector<std::int32_t> offsets{0, 9, 9, 10, 23};
  const std::int64_t rows = 23, depth = 6, cols = 5, segments = 4;
  Case c;
  const TensorId off = c.i32("offsets", offsets);
  const TensorId xt = c.f32("x", {rows, depth}, random_values(rows * depth, rng));
  const TensorId wt = c.f32("w", {segments, depth, cols}, random_values(segments * depth * cols, rng));
  const TensorId gt = c.f32("g", {rows, cols}, random_values(rows * cols, rng));
  c.add(workloads::layers::segment_matmul_input_grad("op", c.graph, gt, off, wt));   // g @ W_s^T -> [23, 6]
  c.add(workloads::layers::segment_matmul_weight_grad("op", c.graph, xt, off, gt));  // x_s^T @ g_s -> [4 * 6, 5]
  in_dtype<S>(c);
  const auto x = held<S>(c.values, xt), w = held<S>(c.values, wt), g = held<S>(c.values, gt);
  const Op& input_grad = c.graph.ops[0];
  for (const auto& grid : grids_for(rows * depth)) {
    auto out = unwritten_output<S>(input_grad);
    cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
      cuda::segment_matmul_transposed_weight_body<S>(t, g.data(), rows, cols, offsets.data(), segments, w.data(), depth, out.data());
    });
    expect_verified<S>(input_grad, c.values, out);
  }
  const Op& weight_grad = c.graph.ops[1];
  for (const auto& grid : grids_for(segments * depth * cols)) {
    auto out = unwritten_output<S>(weight_grad);
    cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
      cuda::segment_matmul_transposed_input_body<S>(t, x.data(), depth, offsets.data(), segments, g.data(), cols, out.data());
    });
    expect_verified<S>(weight_grad, c.values, out);
    for (std::int64_t i = depth * cols; i < 2 * depth * cols; ++i) CHECK(S::load(out[static_cast<std::size_t>(i)]) == 0.0f);
  }
}
