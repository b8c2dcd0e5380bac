// The CUDA training kernels' per-thread bodies (kernels/cuda/training_bodies.hpp), run on the host over
// emulated launch grids (the launcher's, and a small one whose grid-stride loops wrap) and checked
// against the references of the training kinds (ir/reference/training_reference.cpp) within their
// stated bounds. The kernels on a GPU, and cuBLAS's transposed products, need a device.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tests/support/test_support.hpp"
#include "ir/reference/reference.hpp"
#include "tests/support/cuda_half_support.hpp"
#include "tests/support/graph_case.hpp"
#include "kernels/cuda/emulate.hpp"
#include "kernels/cuda/training_bodies.hpp"
#include "tests/support/random_inputs.hpp"
#include "workloads/layers/layers.hpp"

using namespace tilesim;
namespace cuda = tilesim::kernels::cuda;

namespace {

using tilesim_test::cuda_half::grids_for;

using Case = tilesim_test::GraphCase;

Op training_op_of(OpKind kind, std::int64_t rows, std::int64_t cols) {
  Op op;
  op.name = "op";
  op.kind = kind;
  op.shape.num_inputs = rows;
  op.shape.num_features = cols;
  return op;
}

std::vector<float> training_nan_output(const Op& op) {
  return std::vector<float>(static_cast<std::size_t>(op.output_rows() * op.output_cols()), std::numeric_limits<float>::quiet_NaN());
}

void training_expect_verified(const Op& op, const TensorValues& values, const std::vector<float>& out) {
  const reference::Verification v = reference::verify(op, values, out);
  INFO(v.detail);
  CHECK(v.ok);
}

using tilesim_test::random_values;

// The loss bodies in the order cuda_kernels.cu launches them, on one grid: the loss (rows, then the
// weights' sum and the weighted mean, or the plain mean) and the gradient. `weights` null: unweighted.
struct LossOutputs {
  std::vector<float> loss, grad;
};
LossOutputs run_loss_bodies(const cuda::LaunchShape& grid, LossFn fn, const std::vector<float>& x, std::int64_t rows, std::int64_t cols,
                            const std::vector<std::int32_t>& labels, const std::vector<float>& targets, const std::vector<float>* weights) {
  const std::int32_t* l = fn == LossFn::cross_entropy ? labels.data() : nullptr;
  const float* t = fn == LossFn::mse ? targets.data() : nullptr;
  const float* w = weights != nullptr ? weights->data() : nullptr;
  std::vector<float> row_loss(static_cast<std::size_t>(rows), std::numeric_limits<float>::quiet_NaN());
  std::vector<float> sum = {std::numeric_limits<float>::quiet_NaN()};
  LossOutputs o{{std::numeric_limits<float>::quiet_NaN()}, std::vector<float>(static_cast<std::size_t>(rows * cols), std::nanf(""))};
  cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& th) {
    cuda::loss_rows_body(th, fn, x.data(), rows, cols, l, t, row_loss.data(), w);
  });
  if (w != nullptr) {
    cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& th) { cuda::weight_sum_body(th, w, rows, sum.data()); });
    const float cols_per_term = static_cast<float>(fn == LossFn::cross_entropy ? 1 : cols);
    cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& th) {
      cuda::weighted_loss_mean_body(th, row_loss.data(), rows, cols_per_term, sum.data(), o.loss.data());
    });
  } else {
    const float count = static_cast<float>(fn == LossFn::cross_entropy ? rows : rows * cols);
    cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& th) { cuda::loss_mean_body(th, row_loss.data(), rows, count, o.loss.data()); });
  }
  cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& th) {
    cuda::loss_grad_body(th, fn, x.data(), rows, cols, l, t, o.grad.data(), w, w != nullptr ? sum.data() : nullptr);
  });
  return o;
}

}  // namespace

TEST_CASE("cuda unary_grad body: every derivative within the reference's bounds", "[kernels][cuda][training][unit]") {
  std::mt19937 rng(11);
  std::vector<float> x = random_values(300, rng);
  for (float& v : x) v *= 4.0f;
  for (float v : {0.0f, -0.0f, 6.0f, 5.999f, 25.0f, -30.0f, 1e-20f}) x.push_back(v);
  const std::int64_t rows = static_cast<std::int64_t>(x.size());
  const std::vector<float> g = random_values(static_cast<std::size_t>(rows), rng);
  const std::pair<UnaryFn, float> fns[] = {{UnaryFn::relu, 0.0f},         {UnaryFn::leaky_relu, 0.2f},    {UnaryFn::shifted_softplus, 0.0f},
                                           {UnaryFn::exp, 0.0f},          {UnaryFn::scale, 1.5f},         {UnaryFn::rsqrt_or_zero, 0.0f},
                                           {UnaryFn::reciprocal_or_zero, 0.0f}, {UnaryFn::cosine_cutoff, 6.0f},
                                           {UnaryFn::sigmoid, 0.0f},            {UnaryFn::softplus, 0.0f},
                                           {UnaryFn::sqrt, 0.0f},               {UnaryFn::log, 0.0f},
                                           {UnaryFn::clamp_min, 1.0f}};
  for (const auto& [fn, scalar] : fns) {
    INFO(to_string(fn));
    Case c;
    Op op = training_op_of(OpKind::unary_grad, rows, 1);
    op.unary = fn;
    op.scalar = scalar;
    op.input = c.f32("x", {rows, 1}, x);
    op.weight = c.f32("g", {rows, 1}, g);
    const Op& added = c.add(op);
    for (const auto& grid : grids_for(rows)) {
      auto out = training_nan_output(added);
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::unary_grad_body(t, fn, scalar, x.data(), g.data(), rows, out.data()); });
      training_expect_verified(added, c.values, out);
    }
  }
}

TEST_CASE("cuda sum_to body: column sums, group sums per row and per column block", "[kernels][cuda][training][unit]") {
  std::mt19937 rng(12);
  const std::int64_t rows = 37, cols = 12;
  const std::vector<float> x = random_values(static_cast<std::size_t>(rows * cols), rng);
  for (const auto& [other_rows, groups] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 12}, {1, 3}, {1, 1}, {37, 1}, {37, 4}}) {
    INFO(other_rows << " x " << groups);
    Case c;
    Op op = training_op_of(OpKind::sum_to, rows, cols);
    op.shape.other_rows = other_rows;
    op.shape.other_groups = groups;
    op.input = c.f32("x", {rows, cols}, x);
    const Op& added = c.add(op);
    for (const auto& grid : grids_for(other_rows * groups)) {
      auto out = training_nan_output(added);
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::sum_to_body(t, x.data(), rows, cols, other_rows, groups, out.data()); });
      training_expect_verified(added, c.values, out);
    }
  }
}

TEST_CASE("cuda sum_to over many rows: chunk partials then their sums, as the launcher runs them", "[kernels][cuda][training][unit]") {
  std::mt19937 rng(15);
  const std::int64_t rows = 3 * cuda::kSumToChunkRows + 17, cols = 6;  // a ragged last chunk
  const std::vector<float> x = random_values(rows * cols, rng);
  for (std::int64_t groups : {6, 2}) {
    Case c;
    Op op = training_op_of(OpKind::sum_to, rows, cols);
    op.shape.other_rows = 1;
    op.shape.other_groups = groups;
    op.input = c.f32("x", {rows, cols}, x);
    const Op& added = c.add(op);
    const std::int64_t chunks = cuda::sum_to_chunks(rows);
    REQUIRE(chunks == 4);
    for (const auto& grid : grids_for(chunks * cols)) {
      std::vector<float> partial(static_cast<std::size_t>(chunks * cols), std::numeric_limits<float>::quiet_NaN());
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
        cuda::column_partials_body(t, x.data(), rows, cols, cuda::kSumToChunkRows, partial.data());
      });
      auto out = training_nan_output(added);
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) { cuda::sum_to_body(t, partial.data(), chunks, cols, 1, groups, out.data()); });
      training_expect_verified(added, c.values, out);
    }
  }
}

TEST_CASE("cuda loss bodies: cross entropy and mse, their means and gradients", "[kernels][cuda][training][unit]") {
  std::mt19937 rng(13);
  const std::int64_t rows = 45, cols = 7;
  std::vector<float> x = random_values(static_cast<std::size_t>(rows * cols), rng);
  x[3] = 30.0f;  // a large logit: the max shift keeps e^x finite
  std::vector<std::int32_t> labels(static_cast<std::size_t>(rows));
  for (std::size_t r = 0; r < labels.size(); ++r) labels[r] = static_cast<std::int32_t>((r * 5) % cols);
  const std::vector<float> targets = random_values(static_cast<std::size_t>(rows * cols), rng);
  for (LossFn fn : {LossFn::cross_entropy, LossFn::mse}) {
    INFO(to_string(fn));
    Case c;
    Op loss = training_op_of(OpKind::loss, rows, cols);
    loss.loss = fn;
    loss.input = c.f32("x", {rows, cols}, x);
    if (fn == LossFn::cross_entropy) loss.indices = c.i32("labels", labels);
    else loss.weight = c.f32("t", {rows, cols}, targets);
    const Op loss_op = c.add(loss);
    Op grad = loss_op;
    grad.name = "grad";
    grad.kind = OpKind::loss_grad;
    const Op grad_op = c.add(grad);
    const std::int32_t* l = fn == LossFn::cross_entropy ? labels.data() : nullptr;
    const float* t = fn == LossFn::mse ? targets.data() : nullptr;
    for (const auto& grid : grids_for(rows)) {
      std::vector<float> row_loss(static_cast<std::size_t>(rows), std::numeric_limits<float>::quiet_NaN());
      auto out = training_nan_output(loss_op);
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& th) { cuda::loss_rows_body(th, fn, x.data(), rows, cols, l, t, row_loss.data()); });
      const float count = static_cast<float>(fn == LossFn::cross_entropy ? rows : rows * cols);
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& th) { cuda::loss_mean_body(th, row_loss.data(), rows, count, out.data()); });
      training_expect_verified(loss_op, c.values, out);
      auto g = training_nan_output(grad_op);
      cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& th) { cuda::loss_grad_body(th, fn, x.data(), rows, cols, l, t, g.data()); });
      training_expect_verified(grad_op, c.values, g);
    }
  }
}

TEST_CASE("cuda weighted loss bodies: 0/1 weights give the kept rows' loss and gradient exactly, others within the bounds, zeros 0",
          "[kernels][cuda][training][unit]") {
  std::mt19937 rng(17);
  const std::int64_t rows = 40, cols = 6;
  const std::vector<float> x = random_values(rows * cols, rng, -3.0f, 3.0f);
  const std::vector<float> targets = random_values(rows * cols, rng);
  std::vector<std::int32_t> labels(static_cast<std::size_t>(rows));
  for (std::size_t r = 0; r < labels.size(); ++r) labels[r] = static_cast<std::int32_t>((r * 7) % cols);
  const std::vector<float> positive = random_values(rows, rng, 0.05f, 3.0f);
  std::vector<float> mask(static_cast<std::size_t>(rows), 1.0f);
  for (std::size_t r = 0; r < mask.size(); r += 3) mask[r] = 0.0f;  // every third row is padding
  for (std::size_t r = 31; r < mask.size(); ++r) mask[r] = 0.0f;    // and the batch's tail
  const std::vector<float> zeros(static_cast<std::size_t>(rows), 0.0f);
  for (LossFn fn : {LossFn::cross_entropy, LossFn::mse}) {
    INFO(to_string(fn));
    Case c;
    Op loss = training_op_of(OpKind::loss, rows, cols);
    loss.loss = fn;
    loss.input = c.f32("x", {rows, cols}, x);
    if (fn == LossFn::cross_entropy) loss.indices = c.i32("labels", labels);
    else loss.weight = c.f32("t", {rows, cols}, targets);
    loss.aux = c.f32("w", {rows}, positive);
    const Op loss_op = c.add(loss);
    Op grad = loss_op;
    grad.name = "grad";
    grad.kind = OpKind::loss_grad;
    const Op grad_op = c.add(grad);
    const std::int64_t kept = static_cast<std::int64_t>(tilesim_test::kept_rows(labels, 1, mask).size());
    for (const auto& grid : grids_for(rows)) {
      // General positive weights: within the reference's bounds for the weighted loss.
      const LossOutputs weighted = run_loss_bodies(grid, fn, x, rows, cols, labels, targets, &positive);
      training_expect_verified(loss_op, c.values, weighted.loss);
      training_expect_verified(grad_op, c.values, weighted.grad);
      // 0/1 weights: the unweighted bodies over the kept rows, to the last bit (w l is l or 0, and the
      // scale 1 / sum w is 1 / kept).
      const LossOutputs masked = run_loss_bodies(grid, fn, x, rows, cols, labels, targets, &mask);
      const LossOutputs small = run_loss_bodies(grid, fn, tilesim_test::kept_rows(x, cols, mask), kept, cols, tilesim_test::kept_rows(labels, 1, mask),
                                                tilesim_test::kept_rows(targets, cols, mask), nullptr);
      CHECK(masked.loss[0] == small.loss[0]);
      std::size_t k = 0;
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < cols; ++j) {
          const float got = masked.grad[static_cast<std::size_t>(r * cols + j)];
          if (mask[static_cast<std::size_t>(r)] == 0.0f) CHECK(got == 0.0f);
          else CHECK(got == small.grad[k++]);
        }
      // All weights 0: loss and gradient exactly 0, no NaN from 0 / 0.
      const LossOutputs none = run_loss_bodies(grid, fn, x, rows, cols, labels, targets, &zeros);
      CHECK(none.loss[0] == 0.0f);
      CHECK(std::all_of(none.grad.begin(), none.grad.end(), [](float v) { return v == 0.0f; }));
    }
  }
}

TEST_CASE("cuda optimizer body: SGD (plain and momentum) and Adam over two steps within the reference's bounds",
          "[kernels][cuda][training][unit]") {
  std::mt19937 rng(14);
  const std::int64_t count = 301;
  std::vector<float> p = random_values(static_cast<std::size_t>(count), rng);
  const std::vector<float> g = random_values(static_cast<std::size_t>(count), rng);
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
      Case c;
      Op op = training_op_of(OpKind::optimizer_step, 1, count);
      op.optimizer = spec;
      op.input = c.f32("p", {count}, params);
      op.weight = c.f32("g", {1, count}, g);
      if (rows > 0) op.bias = c.f32("s", {rows, count}, state);
      op.aux = c.f32("t", {1, 1}, {static_cast<float>(step)});
      const Op& added = c.add(op);
      std::vector<float> out;
      for (const auto& grid : grids_for(count)) {
        out = training_nan_output(added);
        const cuda::OptimizerScalars s = cuda::optimizer_scalars(spec, step);
        cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
          cuda::optimizer_step_body(t, s, params.data(), g.data(), rows > 0 ? state.data() : nullptr, count, out.data());
        });
        training_expect_verified(added, c.values, out);
      }
      // The next step starts from this one's parameters and state, as a training run carries them.
      std::copy(out.begin(), out.begin() + count, params.begin());
      std::copy(out.begin() + count, out.end(), state.begin());
    }
    CHECK(params != p);
  }
}

TEST_CASE("cuda segment_matmul backward bodies: both transposed forms within the reference's bounds, an empty segment 0",
          "[kernels][cuda][training][unit]") {
  std::mt19937 rng(21);
  // Segments of 9, 0, 1 and 13 rows; the forward's x [23, 6] @ W [4, 6, 5].
  const std::vector<std::int32_t> offsets{0, 9, 9, 10, 23};
  const std::int64_t rows = 23, depth = 6, cols = 5, segments = 4;
  const std::vector<float> x = random_values(static_cast<std::size_t>(rows * depth), rng);
  const std::vector<float> w = random_values(static_cast<std::size_t>(segments * depth * cols), rng);
  const std::vector<float> g = random_values(static_cast<std::size_t>(rows * cols), rng);
  Case c;
  const TensorId off = c.i32("offsets", offsets);
  const TensorId xt = c.f32("x", {rows, depth}, x), wt = c.f32("w", {segments, depth, cols}, w), gt = c.f32("g", {rows, cols}, g);
  // The input's gradient: g [23, 5] @ W_s^T -> [23, 6].
  const Op gi_added = c.add(workloads::layers::segment_matmul_input_grad("op", c.graph, gt, off, wt));
  for (const auto& grid : grids_for(rows * depth)) {
    auto out = training_nan_output(gi_added);
    cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
      cuda::segment_matmul_transposed_weight_body(t, g.data(), rows, cols, offsets.data(), segments, w.data(), depth, out.data());
    });
    training_expect_verified(gi_added, c.values, out);
  }
  // The weight's gradient: x_s^T @ g_s -> [4 * 6, 5].
  const Op gw_added = c.add(workloads::layers::segment_matmul_weight_grad("op", c.graph, xt, off, gt));
  for (const auto& grid : grids_for(segments * depth * cols)) {
    auto out = training_nan_output(gw_added);
    cuda::emulate_launch(grid, [&](const cuda::ThreadIndex& t) {
      cuda::segment_matmul_transposed_input_body(t, x.data(), depth, offsets.data(), segments, g.data(), cols, out.data());
    });
    training_expect_verified(gw_added, c.values, out);
    for (std::int64_t i = depth * cols; i < 2 * depth * cols; ++i) CHECK(out[static_cast<std::size_t>(i)] == 0.0f);
  }
}
