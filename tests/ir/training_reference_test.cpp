// The op kinds a training step adds, in the op graph and in the reference: their shapes, their values
// against finite differences of the forward references they differentiate, and torch.optim's update
// rules worked by hand; and that a backend which does not run them yet refuses them by name.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <stdexcept>

#include "ir/op_graph.hpp"
#include "ir/operands.hpp"
#include "ir/reference/compare.hpp"
#include "ir/reference/reference.hpp"
#include "tests/support/graph_case.hpp"
#include "tests/support/test_support.hpp"
#include "ir/reference/training_reference.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/run_ops.hpp"
#include "workloads/layers/layers.hpp"

using namespace tilesim;

namespace {

using Case = tilesim_test::GraphCase;

Op make(const std::string& name, OpKind kind, std::int64_t rows, std::int64_t cols) {
  return tilesim_test::op_of_kind(name, kind, rows, cols);
}

// Values on a 1/8 grid: perturbing them by a power of two stays exact in float32.
std::vector<float> grid_values(std::size_t n, unsigned seed, int lo = -24, int hi = 24) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(d(rng)) / 8.0f;
  return v;
}

std::vector<float> compute(const Op& op, const TensorValues& values) { return reference::compute(op, values); }

// A loss op and its loss_grad over fresh tensors: predictions x [rows, cols], labels (cross entropy) or
// targets (mse), and row weights when `weights` is not empty.
struct LossPair {
  Op loss, grad;
};
LossPair add_loss_pair(Case& c, const std::string& name, LossFn fn, std::int64_t rows, std::int64_t cols, std::vector<float> x,
                       std::vector<std::int32_t> labels, std::vector<float> targets, std::vector<float> weights) {
  Op l = make(name, OpKind::loss, rows, cols);
  l.loss = fn;
  l.input = c.f32(name + ".x", {rows, cols}, std::move(x));
  if (fn == LossFn::cross_entropy) l.indices = c.i32(name + ".y", std::move(labels));
  else l.weight = c.f32(name + ".t", {rows, cols}, std::move(targets));
  if (!weights.empty()) l.aux = c.f32(name + ".w", {rows}, std::move(weights));
  LossPair p;
  p.loss = c.add(l);
  Op g = p.loss;
  g.name = name + ".grad";
  g.kind = OpKind::loss_grad;
  p.grad = c.add(g);
  return p;
}

}  // namespace

TEST_CASE("unary_grad is grad times the central difference of the forward reference", "[reference][training][unit]") {
  const std::int64_t rows = 6, cols = 5;
  for (UnaryFn fn : {UnaryFn::relu, UnaryFn::leaky_relu, UnaryFn::shifted_softplus, UnaryFn::exp, UnaryFn::scale,
                     UnaryFn::rsqrt_or_zero, UnaryFn::reciprocal_or_zero, UnaryFn::cosine_cutoff, UnaryFn::sigmoid, UnaryFn::softplus,
                     UnaryFn::sqrt, UnaryFn::log, UnaryFn::clamp_min}) {
    INFO(to_string(fn));
    const float scalar = fn == UnaryFn::leaky_relu ? 0.2f : fn == UnaryFn::cosine_cutoff ? 2.5f : 1.5f;
    Case c;
    // Stay off the kinks (0 for relu and the reciprocals, the cutoff), where no difference quotient exists.
    std::vector<float> xs = grid_values(static_cast<std::size_t>(rows * cols), 11, -20, 20);
    for (auto& x : xs) {
      if (x == 0) x = 0.375f;
      if (fn == UnaryFn::rsqrt_or_zero || fn == UnaryFn::reciprocal_or_zero || fn == UnaryFn::sqrt || fn == UnaryFn::log)
        x = std::fabs(x) + 0.25f;
      if (fn == UnaryFn::clamp_min && std::fabs(x - scalar) < 0.2f) x = 3.0f;
      if (fn == UnaryFn::cosine_cutoff && std::fabs(x - scalar) < 0.2f) x = 1.0f;
    }
    const TensorId x = c.f32("x", {rows, cols}, xs);
    const TensorId g = c.f32("g", {rows, cols}, grid_values(static_cast<std::size_t>(rows * cols), 12));
    Op op = make("d", OpKind::unary_grad, rows, cols);
    op.unary = fn;
    op.scalar = scalar;
    op.input = x;
    op.weight = g;
    const Op added = c.add(op);
    const std::vector<float> got = compute(added, c.values);
    const double h = 1e-5;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double xi = xs[i];
      const double fd = (reference::unary_exact(fn, scalar, xi + h) - reference::unary_exact(fn, scalar, xi - h)) / (2 * h);
      const double want = static_cast<double>(c.values.f32(g)[i]) * fd;
      INFO("x = " << xi);
      CHECK(static_cast<double>(got[i]) == Approx(want).epsilon(1e-5).margin(1e-6));
    }
    CHECK(reference::verify(added, c.values, got).ok);
    // The derivative's sign flipped on one nonzero element fails.
    std::vector<float> wrong = got;
    for (auto& v : wrong)
      if (v != 0) {
        v = -v;
        break;
      }
    if (wrong != got) CHECK_FALSE(reference::verify(added, c.values, wrong).ok);
  }
}

TEST_CASE("sum_to is the adjoint of binary's broadcast: <sum_to(G), o> = <G, broadcast(o)>", "[reference][training][unit]") {
  const std::int64_t rows = 5, cols = 6;
  struct Target {
    std::int64_t other_rows, groups;
  };
  for (const Target t : {Target{1, cols}, Target{rows, 1}, Target{rows, 3}, Target{1, 2}, Target{rows, cols}}) {
    INFO("to [" << t.other_rows << ", " << t.groups << "]");
    Case c;
    const TensorId grad = c.f32("G", {rows, cols}, grid_values(static_cast<std::size_t>(rows * cols), 3));
    const TensorId ones = c.f32("zeros", {rows, cols}, std::vector<float>(static_cast<std::size_t>(rows * cols), 0.0f));
    const TensorId o = c.f32("o", {t.other_rows, t.groups}, grid_values(static_cast<std::size_t>(t.other_rows * t.groups), 4));
    Op s = make("s", OpKind::sum_to, rows, cols);
    s.shape.other_rows = t.other_rows;
    s.shape.other_groups = t.groups;
    s.input = grad;
    const Op sum_op = c.add(s);
    const std::vector<float> summed = compute(sum_op, c.values);
    REQUIRE(static_cast<std::int64_t>(summed.size()) == t.other_rows * t.groups);
    CHECK(reference::verify(sum_op, c.values, summed).ok);
    // broadcast(o) as binary add onto zeros.
    Op b = make("b", OpKind::binary, rows, cols);
    b.binary = BinaryFn::add;
    b.input = ones;
    b.weight = o;
    b.shape.other_rows = t.other_rows;
    b.shape.other_groups = t.groups;
    const Op bcast = c.add(b);
    const std::vector<float> spread = compute(bcast, c.values);
    double lhs = 0, rhs = 0;
    for (std::size_t i = 0; i < summed.size(); ++i) lhs += static_cast<double>(summed[i]) * c.values.f32(o)[i];
    for (std::size_t i = 0; i < spread.size(); ++i) rhs += static_cast<double>(spread[i]) * c.values.f32(grad)[i];
    CHECK(lhs == rhs);  // grid values: every product and sum is exact
    std::vector<float> wrong = summed;
    wrong[0] += 0.125f;
    CHECK_FALSE(reference::verify(sum_op, c.values, wrong).ok);
  }
}

TEST_CASE("loss values by hand, and loss_grad is the central difference of loss", "[reference][training][unit]") {
  SECTION("cross entropy of equal logits is log C; mse by hand") {
    Case c;
    const TensorId x = c.f32("x", {2, 4}, {0, 0, 0, 0, 1, 1, 1, 1});
    const TensorId y = c.i32("y", {3, 0});
    Op ce = make("ce", OpKind::loss, 2, 4);
    ce.indices = y;
    ce.input = x;
    const Op ce_op = c.add(ce);
    CHECK(compute(ce_op, c.values)[0] == Approx(std::log(4.0)).epsilon(1e-7));
    const TensorId t = c.f32("t", {2, 4}, {1, 0, 0, 0, 1, 1, 1, 3});
    Op mse = make("mse", OpKind::loss, 2, 4);
    mse.loss = LossFn::mse;
    mse.input = x;
    mse.weight = t;
    const Op mse_op = c.add(mse);
    CHECK(compute(mse_op, c.values)[0] == Approx(5.0 / 8.0).epsilon(1e-7));  // (1 + 4) / 8
    CHECK(ce_op.output_rows() == 1);
    CHECK(ce_op.output_cols() == 1);
  }
  for (LossFn fn : {LossFn::cross_entropy, LossFn::mse}) {
    INFO(to_string(fn));
    const std::int64_t rows = 5, cols = 3;
    Case c;
    std::vector<float> xs = grid_values(static_cast<std::size_t>(rows * cols), 21);
    const TensorId x = c.f32("x", {rows, cols}, xs);
    Op l = make("l", OpKind::loss, rows, cols);
    l.loss = fn;
    l.input = x;
    if (fn == LossFn::cross_entropy) l.indices = c.i32("y", {0, 2, 1, 1, 0});
    else l.weight = c.f32("t", {rows, cols}, grid_values(static_cast<std::size_t>(rows * cols), 22));
    const Op loss_op = c.add(l);
    Op lg = loss_op;
    lg.name = "lg";
    lg.kind = OpKind::loss_grad;
    const Op grad_op = c.add(lg);
    const std::vector<float> grad = compute(grad_op, c.values);
    REQUIRE(static_cast<std::int64_t>(grad.size()) == rows * cols);
    CHECK(reference::verify(grad_op, c.values, grad).ok);
    const float h = 1.0f / 1024;  // exact on the 1/8 grid
    for (std::size_t i = 0; i < xs.size(); ++i) {
      auto& xv = c.values.mutable_f32(x);
      xv[i] = xs[i] + h;
      const double up = reference::expect(loss_op, resolve_operands(loss_op, c.values)).value[0];
      xv[i] = xs[i] - h;
      const double down = reference::expect(loss_op, resolve_operands(loss_op, c.values)).value[0];
      xv[i] = xs[i];
      CHECK(static_cast<double>(grad[i]) == Approx((up - down) / (2.0 * h)).margin(2e-6));
    }
    std::vector<float> scaled = grad;  // forgetting the mean's 1/M fails
    for (auto& v : scaled) v *= static_cast<float>(rows);
    CHECK_FALSE(reference::verify(grad_op, c.values, scaled).ok);
  }
}

TEST_CASE("row weights of 0 and 1 give exactly the unweighted loss and gradient of the rows of weight 1, reference and cpu",
          "[reference][training][unit]") {
  const std::int64_t rows = 7, cols = 5;
  const std::vector<float> w = {1, 0, 1, 1, 0, 0, 1};  // a batch of 4 padded to 7
  const std::vector<float> x = grid_values(static_cast<std::size_t>(rows * cols), 31);
  const std::vector<std::int32_t> labels = {0, 4, 2, 1, 3, 3, 0};
  const std::vector<float> targets = grid_values(static_cast<std::size_t>(rows * cols), 32);
  for (LossFn fn : {LossFn::cross_entropy, LossFn::mse}) {
    INFO(to_string(fn));
    Case c;
    const LossPair padded = add_loss_pair(c, "padded", fn, rows, cols, x, labels, targets, w);
    const LossPair kept = add_loss_pair(c, "kept", fn, 4, cols, tilesim_test::kept_rows(x, cols, w), tilesim_test::kept_rows(labels, 1, w), tilesim_test::kept_rows(targets, cols, w), {});
    // The reference: the same terms in the same order, so the same double to the last bit.
    CHECK(reference::expect(padded.loss, resolve_operands(padded.loss, c.values)).value[0] ==
          reference::expect(kept.loss, resolve_operands(kept.loss, c.values)).value[0]);
    const std::vector<float> padded_grad = compute(padded.grad, c.values), kept_grad = compute(kept.grad, c.values);
    std::size_t k = 0;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < cols; ++j) {
        INFO("row " << r << " column " << j);
        const float got = padded_grad[static_cast<std::size_t>(r * cols + j)];
        if (w[static_cast<std::size_t>(r)] == 0) CHECK(got == 0.0f);
        else CHECK(got == kept_grad[k++]);
      }
    CHECK(k == kept_grad.size());
    // The cpu backend: each gradient row's scale is 1 / 4 either way, so the gradients agree exactly; the
    // loss sums the same terms (mse's in SIMD lanes that the padding shifts), so agrees to rounding.
    kernels::cpu::CpuBackend cpu;
    const BackendResult result = cpu.run(c.graph, c.values, tilesim_test::single_call());
    for (const OpResult& row : result.ops) {
      INFO(row.op << ": " << row.verification);
      CHECK(row.verified == true);
    }
    const std::vector<float>& cpu_padded = cpu.outputs().f32(padded.grad.output);
    const std::vector<float>& cpu_kept = cpu.outputs().f32(kept.grad.output);
    k = 0;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < cols; ++j) {
        const float got = cpu_padded[static_cast<std::size_t>(r * cols + j)];
        if (w[static_cast<std::size_t>(r)] == 0) CHECK(got == 0.0f);
        else CHECK(got == cpu_kept[k++]);
      }
    CHECK(cpu.outputs().f32(padded.loss.output)[0] == Approx(cpu.outputs().f32(kept.loss.output)[0]).epsilon(1e-6));
    // And the weights matter: the unweighted loss over all seven rows is another value.
    Case plain;
    const LossPair all = add_loss_pair(plain, "all", fn, rows, cols, x, labels, targets, {});
    CHECK(compute(all.loss, plain.values)[0] != compute(kept.loss, c.values)[0]);
  }
}

TEST_CASE("weighted losses by hand, and the weighted loss_grad is the central difference of the weighted loss",
          "[reference][training][unit]") {
  SECTION("cross entropy of equal logits is log C whatever the weights; mse by hand") {
    Case c;
    const LossPair ce = add_loss_pair(c, "ce", LossFn::cross_entropy, 2, 4, {0, 0, 0, 0, 1, 1, 1, 1}, {3, 0}, {}, {3, 0.5f});
    CHECK(compute(ce.loss, c.values)[0] == Approx(std::log(4.0)).epsilon(1e-7));
    // Row sums of squares 1 and 4, weights 3 and 1: (3 * 1 + 1 * 4) / (4 * (3 + 1)).
    const LossPair mse = add_loss_pair(c, "mse", LossFn::mse, 2, 4, {0, 0, 0, 0, 1, 1, 1, 1}, {}, {1, 0, 0, 0, 1, 1, 1, 3}, {3, 1});
    CHECK(compute(mse.loss, c.values)[0] == Approx(7.0 / 16.0).epsilon(1e-7));
    // d/dx of row 0's first element: 2 * 3 * (0 - 1) / (4 * 4).
    CHECK(compute(mse.grad, c.values)[0] == Approx(-6.0 / 16.0).epsilon(1e-7));
  }
  const std::vector<float> weights = {0.5f, 2.0f, 0.25f, 1.5f, 3.0f};
  for (LossFn fn : {LossFn::cross_entropy, LossFn::mse}) {
    INFO(to_string(fn));
    const std::int64_t rows = 5, cols = 3;
    Case c;
    const std::vector<float> xs = grid_values(static_cast<std::size_t>(rows * cols), 21);
    const LossPair p = add_loss_pair(c, "l", fn, rows, cols, xs, {0, 2, 1, 1, 0}, grid_values(static_cast<std::size_t>(rows * cols), 22),
                                     weights);
    const std::vector<float> grad = compute(p.grad, c.values);
    CHECK(reference::verify(p.grad, c.values, grad).ok);
    CHECK(reference::verify(p.loss, c.values, compute(p.loss, c.values)).ok);
    const TensorId x = p.loss.input;
    const float h = 1.0f / 1024;  // exact on the 1/8 grid
    for (std::size_t i = 0; i < xs.size(); ++i) {
      auto& xv = c.values.mutable_f32(x);
      xv[i] = xs[i] + h;
      const double up = reference::expect(p.loss, resolve_operands(p.loss, c.values)).value[0];
      xv[i] = xs[i] - h;
      const double down = reference::expect(p.loss, resolve_operands(p.loss, c.values)).value[0];
      xv[i] = xs[i];
      CHECK(static_cast<double>(grad[i]) == Approx((up - down) / (2.0 * h)).margin(2e-6));
    }
    // The unweighted gradient of the same predictions fails the weighted op's check.
    Op unweighted = p.grad;
    unweighted.aux = -1;
    CHECK_FALSE(reference::verify(p.grad, c.values, compute(unweighted, c.values)).ok);
    // So does the weighted one without the division by the weights' sum.
    std::vector<float> unnormalised = grad;
    double sum = 0;
    for (float v : weights) sum += v;
    for (auto& v : unnormalised) v *= static_cast<float>(sum);
    CHECK_FALSE(reference::verify(p.grad, c.values, unnormalised).ok);
  }
}

TEST_CASE("all-zero row weights give a loss and gradient of exactly 0, row weights are checked like the other operands",
          "[reference][training][unit]") {
  const std::int64_t rows = 3, cols = 4;
  for (LossFn fn : {LossFn::cross_entropy, LossFn::mse}) {
    INFO(to_string(fn));
    Case c;
    const LossPair p = add_loss_pair(c, "l", fn, rows, cols, grid_values(12, 41), {1, 3, 0}, grid_values(12, 42), {0, 0, 0});
    CHECK(compute(p.loss, c.values) == std::vector<float>{0.0f});
    for (float v : compute(p.grad, c.values)) CHECK(v == 0.0f);
    CHECK_FALSE(reference::verify(p.loss, c.values, {std::nanf("")}).ok);
    CHECK_FALSE(reference::verify(p.loss, c.values, {1e-3f}).ok);
    kernels::cpu::CpuBackend cpu;
    cpu.run(c.graph, c.values, tilesim_test::single_call());
    CHECK(cpu.outputs().f32(p.loss.output) == std::vector<float>{0.0f});
    for (float v : cpu.outputs().f32(p.grad.output)) CHECK(v == 0.0f);
  }
  SECTION("shape and dtype") {
    Case c;
    Op l = make("l", OpKind::loss, rows, cols);
    l.input = c.f32("x", {rows, cols}, grid_values(12, 43));
    l.indices = c.i32("y", {0, 1, 2});
    l.aux = c.f32("w", {rows, 1}, {1, 1, 1});
    CHECK_THROWS_WITH(c.graph.add_op(l), Catch::Contains("row weights") && Catch::Contains("[3]"));
    l.aux = c.graph.add_tensor({"w_int", {rows}, DType::int32});
    CHECK_THROWS_WITH(c.graph.add_op(l), Catch::Contains("row weights"));
    l.aux = c.f32("w_short", {rows - 1}, {1, 1});
    CHECK_THROWS_AS(c.graph.add_op(l), std::invalid_argument);
  }
  SECTION("negative, NaN and infinite weights") {
    for (float bad : {-1.0f, std::nanf(""), INFINITY}) {
      INFO(bad);
      Case c;
      const LossPair p = add_loss_pair(c, "l", LossFn::cross_entropy, rows, cols, grid_values(12, 44), {0, 1, 2}, {}, {1, 1, bad});
      CHECK_THROWS_WITH(check_operands(p.loss, resolve_operands(p.loss, c.values), "test"), Catch::Contains("row weights[2]"));
      CHECK_THROWS_AS(compute(p.grad, c.values), std::invalid_argument);
    }
  }
  SECTION("FLOPs and bytes: the weights read once, a multiply and a sum per row") {
    for (LossFn fn : {LossFn::cross_entropy, LossFn::mse})
      for (OpKind kind : {OpKind::loss, OpKind::loss_grad}) {
        Op op = make("l", kind, 100, 7);
        op.loss = fn;
        const double flops = op.flops();
        const std::int64_t bytes = op.min_bytes_read();
        op.aux = 0;
        CHECK(op.flops() == flops + 2.0 * 100);
        CHECK(op.min_bytes_read() == bytes + 100 * 4);
      }
  }
}

TEST_CASE("optimizer_step follows torch.optim's SGD and Adam updates", "[reference][training][unit]") {
  SECTION("sgd with weight decay, no momentum: p - lr (g + wd p), no state") {
    Case c;
    const TensorId p = c.f32("p", {3}, {1, -2, 0.5f});
    const TensorId g = c.f32("g", {1, 3}, {0.5f, 0.25f, -1});
    Op op = make("sgd", OpKind::optimizer_step, 1, 3);
    op.optimizer.lr = 0.5;
    op.optimizer.weight_decay = 0.5;
    op.input = p;
    op.weight = g;
    const Op added = c.add(op);
    CHECK(added.output_rows() == 1);
    const auto out = compute(added, c.values);
    CHECK(out == std::vector<float>{1 - 0.5f * 1.0f, -2 - 0.5f * (0.25f - 1), 0.5f - 0.5f * (-1 + 0.25f)});
  }
  SECTION("sgd with momentum: two steps keep the buffer as torch does (the first is the gradient)") {
    Case c;
    const TensorId p = c.f32("p", {1, 2}, {1, 1});
    const TensorId g = c.f32("g", {1, 2}, {1, -1});
    const TensorId state = c.f32("b", {1, 2}, {0, 0});
    Op op = make("sgd", OpKind::optimizer_step, 1, 2);
    op.optimizer.lr = 0.25;
    op.optimizer.momentum = 0.5;
    op.input = p;
    op.weight = g;
    op.bias = state;
    const Op added = c.add(op);
    auto out = compute(added, c.values);
    CHECK(out == std::vector<float>{0.75f, 1.25f, 1, -1});
    c.values.set_f32(p, {out[0], out[1]});
    c.values.set_f32(state, {out[2], out[3]});
    out = compute(added, c.values);
    CHECK(out == std::vector<float>{0.75f - 0.25f * 1.5f, 1.25f + 0.25f * 1.5f, 1.5f, -1.5f});
  }
  SECTION("adam's first step moves every parameter by about lr against its gradient's sign") {
    Case c;
    const TensorId p = c.f32("p", {2, 2}, {1, 1, 1, 1});
    const TensorId g = c.f32("g", {2, 2}, {3, -0.5f, 1e-3f, -20});
    const TensorId state = c.f32("mv", {2, 4}, std::vector<float>(8, 0.0f));
    const TensorId step = c.f32("t", {1, 1}, {1});
    Op op = make("adam", OpKind::optimizer_step, 2, 2);
    op.optimizer.kind = OptimizerSpec::Kind::adam;
    op.optimizer.lr = 0.01;
    op.input = p;
    op.weight = g;
    op.bias = state;
    op.aux = step;
    const Op added = c.add(op);
    REQUIRE(added.output_rows() == 3);
    const auto out = compute(added, c.values);
    const double gs[] = {3, -0.5, 1e-3, -20};
    for (int i = 0; i < 4; ++i) {
      // m = 0.1 g, v = 0.001 g^2; corrected: m / 0.1 = g, sqrt(v / 0.001) = |g|: the step is lr g / (|g| + eps).
      CHECK(out[static_cast<std::size_t>(i)] == Approx(1 - 0.01 * gs[i] / (std::fabs(gs[i]) + 1e-8)).epsilon(1e-6));
      CHECK(out[static_cast<std::size_t>(4 + i)] == Approx(0.1 * gs[i]).epsilon(1e-6));
      CHECK(out[static_cast<std::size_t>(8 + i)] == Approx(0.001 * gs[i] * gs[i]).epsilon(1e-6));
    }
    CHECK(reference::verify(added, c.values, out).ok);
    std::vector<float> wrong = out;
    wrong[0] = 1 - 0.01f * 0.999f;  // a step 0.1% short
    CHECK_FALSE(reference::verify(added, c.values, wrong).ok);
    // Adam without its step tensor is not an op.
    Op no_step = op;
    no_step.name = "adam2";
    no_step.aux = -1;
    CHECK_THROWS_AS(c.graph.add_op(no_step), std::invalid_argument);
  }
}

TEST_CASE("a transposed matmul equals the plain one on the transposed operands", "[reference][training][unit]") {
  Case c;
  const std::int64_t m = 3, k = 4, n = 2;
  const std::vector<float> a = grid_values(static_cast<std::size_t>(m * k), 31), w = grid_values(static_cast<std::size_t>(k * n), 32);
  std::vector<float> a_t(a.size()), w_t(w.size());
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < k; ++j) a_t[static_cast<std::size_t>(j * m + i)] = a[static_cast<std::size_t>(i * k + j)];
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < n; ++j) w_t[static_cast<std::size_t>(j * k + i)] = w[static_cast<std::size_t>(i * n + j)];
  Op plain = make("plain", OpKind::matmul, m, k);
  plain.shape.out_features = n;
  plain.input = c.f32("a", {m, k}, a);
  plain.weight = c.f32("w", {k, n}, w);
  Op both = plain;
  both.name = "both";
  both.transpose_input = both.transpose_weight = true;
  both.input = c.f32("a_t", {k, m}, a_t);
  both.weight = c.f32("w_t", {n, k}, w_t);
  const std::vector<float> want = compute(c.add(plain), c.values);
  const Op t = c.add(both);
  CHECK(compute(t, c.values) == want);
  CHECK(reference::verify(t, c.values, want).ok);
  CHECK(t.flops() == c.graph.ops[0].flops());
  // The stored shapes are checked: a transposed input given untransposed is refused.
  Op bad = both;
  bad.name = "bad";
  bad.input = plain.input;
  CHECK_THROWS_AS(c.graph.add_op(bad), std::invalid_argument);
}

TEST_CASE("segment_matmul's backward forms equal per-segment products, an empty segment's weight gradient 0", "[reference][training][unit]") {
  Case c;
  // Segments of 3, 0 and 4 rows; forward X [7, 4] @ W [3, 4, 2] -> [7, 2].
  const std::int64_t m = 7, k = 4, n = 2, segs = 3;
  const std::vector<std::int32_t> offsets{0, 3, 3, 7};
  const std::vector<float> x = grid_values(static_cast<std::size_t>(m * k), 41), w = grid_values(static_cast<std::size_t>(segs * k * n), 42),
                           g = grid_values(static_cast<std::size_t>(m * n), 43);
  const TensorId off = c.i32("offsets", offsets);
  const TensorId x_t = c.f32("x", {m, k}, x), w_t = c.f32("w", {segs, k, n}, w), g_t = c.f32("g", {m, n}, g);
  const auto at = [](const std::vector<float>& v, std::int64_t i) { return static_cast<double>(v[static_cast<std::size_t>(i)]); };
  const auto segment_of = [&](std::int64_t r) {
    std::int64_t s = 0;
    while (offsets[static_cast<std::size_t>(s + 1)] <= r) ++s;
    return s;
  };
  // The input's gradient g_s @ W_s^T: input g [7, 2], weight W read as [3, 2, 4], out [7, 4].
  const Op gi_added = c.add(workloads::layers::segment_matmul_input_grad("grad.input", c.graph, g_t, off, w_t));
  CHECK(c.graph.tensor(gi_added.output).shape == std::vector<std::int64_t>{m, k});
  CHECK(gi_added.flops() == 2.0 * m * k * n);
  CHECK(gi_added.min_bytes() == (m * n + segs * k * n + m * k) * 4 + (segs + 1) * 4);
  const std::vector<float> gx = compute(gi_added, c.values);
  for (std::int64_t r = 0; r < m; ++r)
    for (std::int64_t p = 0; p < k; ++p) {
      double want = 0;
      for (std::int64_t j = 0; j < n; ++j) want += at(g, r * n + j) * at(w, segment_of(r) * k * n + p * n + j);
      CHECK(static_cast<double>(gx[static_cast<std::size_t>(r * k + p)]) == Approx(want).epsilon(1e-6));
    }
  CHECK(reference::verify(gi_added, c.values, gx).ok);
  // The weight's gradient x_s^T @ g_s: out [3 * 4, 2], the empty segment's block zero.
  const Op gw_added = c.add(workloads::layers::segment_matmul_weight_grad("grad.weight", c.graph, x_t, off, g_t));
  CHECK(c.graph.tensor(gw_added.output).shape == std::vector<std::int64_t>{segs * k, n});
  CHECK(gw_added.flops() == 2.0 * m * k * n);
  CHECK(gw_added.min_bytes() == (m * k + m * n + segs * k * n) * 4 + (segs + 1) * 4);
  const std::vector<float> gwv = compute(gw_added, c.values);
  REQUIRE(gwv.size() == static_cast<std::size_t>(segs * k * n));
  for (std::int64_t s = 0; s < segs; ++s)
    for (std::int64_t p = 0; p < k; ++p)
      for (std::int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (std::int64_t r = offsets[static_cast<std::size_t>(s)]; r < offsets[static_cast<std::size_t>(s + 1)]; ++r)
          want += at(x, r * k + p) * at(g, r * n + j);
        CHECK(static_cast<double>(gwv[static_cast<std::size_t>((s * k + p) * n + j)]) == Approx(want).epsilon(1e-6));
        if (s == 1) CHECK(gwv[static_cast<std::size_t>((s * k + p) * n + j)] == 0.0f);
      }
  CHECK(reference::verify(gw_added, c.values, gwv).ok);
  // Segment 0's and segment 2's blocks swapped fail, as does anything in the empty segment's.
  std::vector<float> swapped = gwv;
  std::swap_ranges(swapped.begin(), swapped.begin() + k * n, swapped.begin() + 2 * k * n);
  CHECK_FALSE(reference::verify(gw_added, c.values, swapped).ok);
  std::vector<float> leak = gwv;
  leak[static_cast<std::size_t>(k * n)] = 1e-3f;
  CHECK_FALSE(reference::verify(gw_added, c.values, leak).ok);
  // The stored shapes are checked: the weight's gradient given the weight instead of the gradient.
  Op bad = gw_added;
  bad.name = "bad";
  bad.weight = w_t;
  CHECK_THROWS_AS(c.graph.add_op(bad), std::invalid_argument);
}

TEST_CASE("a measured backend that runs forward graphs only refuses a training op by name", "[reference][training][unit]") {
  Case c;
  const TensorId x = c.f32("x", {2, 2}, {0, 1, 2, 3});
  Op l = make("head.loss", OpKind::loss, 2, 2);
  l.indices = c.i32("y", {0, 1});
  l.input = x;
  c.add(l);
  // The per-op loop of the measured backends, as torch-cpu and cuda call it (without runs_training).
  bool ran = false;
  BackendResult result;
  TensorValues outputs;
  const kernels::TimedOpRunner runner = [&](const Op&, const Operands&, std::vector<float>&) {
    ran = true;
    return kernels::cpu::TimingStats{};
  };
  try {
    kernels::run_measured_ops(c.graph, c.values, "forward-only backend", runner, result, outputs);
    FAIL("the loop ran a loss op");
  } catch (const std::invalid_argument& e) {
    CHECK_THAT(e.what(), Catch::Contains("head.loss") && Catch::Contains("training-step op"));
  }
  CHECK_FALSE(ran);
}

TEST_CASE("compare_through_operands: Adam's first update of a gradient near eps, apart as each side's gradient makes it",
          "[reference][training][unit]") {
  // Two backends' gradients of one parameter, differing by rounding; the first element's gradient is
  // near Adam's eps (as when weight decay nearly cancels it), so its update g / (|g| + eps) moves by a
  // good part of lr between the two, far beyond any bound on the update alone.
  Case c;
  const TensorId p = c.f32("p", {1, 2}, {0.5f, -0.25f});
  const TensorId state = c.f32("state", {2, 2}, {0, 0, 0, 0});
  const TensorId step = c.f32("step", {1, 1}, {1});
  const TensorId g = c.graph.add_tensor({"g", {1, 2}, DType::float32});  // formed by an earlier op
  Op op = make("adam", OpKind::optimizer_step, 1, 2);
  op.optimizer.kind = OptimizerSpec::Kind::adam;
  op.optimizer.lr = 0.01;
  op.input = p;
  op.weight = g;
  op.bias = state;
  op.aux = step;
  const Op added = c.add(op);
  TensorValues a_side, b_side;
  a_side.set_f32(g, {1.0e-8f, 0.125f});
  b_side.set_f32(g, {1.3e-8f, 0.125f});
  TensorValues with_a = c.values, with_b = c.values;
  with_a.set_f32(g, a_side.f32(g));
  with_b.set_f32(g, b_side.f32(g));
  const std::vector<float> out_a = compute(added, with_a), out_b = compute(added, with_b);
  REQUIRE(std::fabs(out_a[0] - out_b[0]) > 1e-4);  // about lr * (0.57 - 0.50)
  // A bound from one side's operands alone cannot explain it; the two sides' exact updates do.
  CHECK_FALSE(reference::compare_outputs(added, c.values, a_side, out_a, out_b).equal);
  const auto through = reference::compare_through_operands(added, c.values, a_side, b_side, out_a, out_b);
  INFO(through.detail);
  CHECK(through.equal);
  // An output off by more than its operands explain still fails.
  std::vector<float> wrong = out_b;
  wrong[1] += 1e-3f;
  const auto off = reference::compare_through_operands(added, c.values, a_side, b_side, out_a, wrong);
  CHECK_FALSE(off.equal);
  CHECK_THAT(off.detail, Catch::Contains("beyond what their operands explain") && Catch::Contains("column 1"));
}
