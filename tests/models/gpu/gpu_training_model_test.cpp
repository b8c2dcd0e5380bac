// The GPU model on the kinds of a training step (models/gpu/gpu_training_model.cpp): transposed
// matmuls, unary_grad, sum_to, loss and loss_grad (row-weighted too), segment_matmul's backward and a
// backward scatter_add, in both modes and against hand-computed times. The optimizer's update is in
// gpu_optimizer_model_test.cpp.
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "models/gpu/gpu_machine.hpp"
#include "models/gpu/gpu_model.hpp"
#include "tests/support/gpu_model_cases.hpp"

using namespace tilesim;
using namespace tilesim::gpu;
using namespace tilesim_test::gpu_cases;

namespace {

// One op of every training kind and setting at a size scaled by `n` (rows) and `f` (features).
std::vector<OneOp> every_training_kind(std::int64_t n, std::int64_t f) {
  std::vector<OneOp> ops;
  ops.push_back(make_training_op(transposed_matmul(f, n, 16, true)));   // x^T @ g: a weight's gradient
  ops.push_back(make_training_op(transposed_matmul(n, 16, f, false)));  // g @ W^T: an input's gradient
  for (UnaryFn fn : {UnaryFn::relu, UnaryFn::leaky_relu, UnaryFn::shifted_softplus, UnaryFn::exp, UnaryFn::scale,
                     UnaryFn::rsqrt_or_zero, UnaryFn::reciprocal_or_zero, UnaryFn::cosine_cutoff, UnaryFn::sigmoid, UnaryFn::softplus,
                     UnaryFn::sqrt, UnaryFn::log, UnaryFn::clamp_min})
    ops.push_back(make_training_op(unary_grad_op(fn, n, f)));
  ops.push_back(make_training_op(sum_to_op(n, f, 1, f)));  // a bias row's column sums
  ops.push_back(make_training_op(sum_to_op(n, f, n, 1)));  // a per-row scalar's row sums
  for (LossFn fn : {LossFn::cross_entropy, LossFn::mse})
    for (OpKind kind : {OpKind::loss, OpKind::loss_grad})
      for (bool weighted : {false, true}) ops.push_back(make_training_op(loss_op(kind, fn, n, f, weighted)));
  for (const OptimizerSpec& o : {adam(5e-4), adam(0), sgd(0, 0), sgd(0.9, 1e-4)}) ops.push_back(make_training_op(step_op(o, n, f)));
  return ops;
}

std::string describe(const Op& op) {
  std::string d = to_string(op.kind);
  if (op.kind == OpKind::unary_grad) d += " " + to_string(op.unary);
  if (op.kind == OpKind::loss || op.kind == OpKind::loss_grad) d += " " + to_string(op.loss) + (op.aux >= 0 ? " weighted" : "");
  if (op.kind == OpKind::optimizer_step) d += " " + to_string(op.optimizer.kind);
  if (op.kind == OpKind::sum_to) d += " to [" + std::to_string(op.shape.other_rows) + ", " + std::to_string(op.shape.other_groups) + "]";
  if (op.transpose_input) d += " x^T @ g";
  if (op.transpose_weight) d += " g @ W^T";
  return d;
}

}  // namespace

TEST_CASE("training kinds are modeled in both modes: positive, eager >= kernel, host floor when tiny", "[gpu][model][training][unit]") {
  for (const auto& name : shipped_gpu_machines()) {
    const GpuMachine m = load_gpu_machine(name);
    for (std::int64_t n : {8, 4096, 65536}) {
      for (std::int64_t f : {8, 128}) {
        for (const OneOp& g : every_training_kind(n, f)) {
          const Op& op = g.op();
          INFO(name << " " << describe(op) << " n=" << n << " f=" << f);
          const auto k = predict_op(op, m, GpuMode::kernel);
          const auto e = predict_op(op, m, GpuMode::eager);
          CHECK(k.time_s > 0);
          CHECK(k.time_s == k.kernel_s);
          CHECK(e.kernel_s == k.kernel_s);
          CHECK(e.time_s >= k.time_s);
          CHECK(e.host_floor_s > 0);
          CHECK(!e.call.empty());
          CHECK(!k.kernels.empty());
          CHECK(k.time_s >= m.calibration.launch_latency_s * static_cast<double>(k.kernels.size()));
          CHECK(k.flops == op.flops());
          for (const auto& kernel : k.kernels) CHECK(kernel.l2_bytes > 0);  // every kernel moves bytes
          if (n == 8 && f == 8) {
            CHECK(e.time_s == e.host_floor_s);
            CHECK(e.limiter == "host");
          }
        }
      }
    }
  }
}

TEST_CASE("training kinds take more time on more rows and wider rows, in both modes", "[gpu][model][training][unit]") {
  const GpuMachine m = load_gpu_machine("a100-40gb");
  const std::size_t kinds = every_training_kind(8, 8).size();
  for (GpuMode mode : {GpuMode::kernel, GpuMode::eager}) {
    for (std::size_t i = 0; i < kinds; ++i) {
      double first = 0, last = 0;
      for (std::int64_t n = 8; n <= (1 << 20); n *= 4) {
        const OneOp g = std::move(every_training_kind(n, 64)[i]);
        INFO(to_string(mode) << " " << describe(g.op()) << " n=" << n);
        const double t = predict_op(g.op(), m, mode).time_s;
        CHECK(t >= last);
        if (first == 0) first = t;
        last = t;
      }
      INFO(to_string(mode) << " " << describe(every_training_kind(8, 64)[i].op()));
      CHECK(last > first);  // a million rows cost more than eight, whatever floor the small one sits on
      last = 0;
      for (std::int64_t f = 1; f <= 1024; f *= 4) {
        const OneOp g = std::move(every_training_kind(4096, f)[i]);
        INFO(to_string(mode) << " " << describe(g.op()) << " f=" << f);
        const double t = predict_op(g.op(), m, mode).time_s;
        CHECK(t >= last);
        last = t;
      }
    }
  }
}

TEST_CASE("a transposed matmul costs what the plain matmul of the same M, K and N costs", "[gpu][model][training][unit]") {
  for (const auto& name : shipped_gpu_machines()) {
    const GpuMachine m = load_gpu_machine(name);
    for (const auto& [rows, k, n] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
             {1433, 2708, 16}, {2708, 16, 1433}, {64, 64, 64}, {19717, 500, 64}, {3, 100000, 7}}) {
      INFO(name << " " << rows << " x " << k << " x " << n);
      const auto plain = make_op(OpKind::matmul, dense(rows, k, n));
      for (bool transpose_input : {true, false}) {
        const auto t = make_training_op(transposed_matmul(rows, k, n, transpose_input));
        for (GpuMode mode : {GpuMode::kernel, GpuMode::eager}) {
          const auto pt = predict_op(t.op(), m, mode), pp = predict_op(plain.op(), m, mode);
          CHECK(pt.time_s == pp.time_s);
          CHECK(pt.l2_bytes == pp.l2_bytes);
          CHECK(pt.flops == pp.flops);
          CHECK(pt.kernels.size() == pp.kernels.size());
          CHECK(pt.call != pp.call);  // it says which product of the backward it is
        }
      }
    }
  }
}

TEST_CASE("segment_matmul's backward: the input's gradient is the forward's grouped GEMM, the weight's a GEMM per segment",
          "[gpu][model][training][unit]") {
  for (const auto& name : shipped_gpu_machines()) {
    const GpuMachine m = load_gpu_machine(name);
    const std::int64_t rows = 32768, k = 64, n = 16, segments = 4;
    INFO(name);
    const auto forward = make_op(OpKind::segment_matmul, dense(rows, k, n, segments));
    Op input_grad = training_op(OpKind::segment_matmul, rows, k);
    input_grad.shape.out_features = n;
    input_grad.shape.num_segments = segments;
    input_grad.transpose_weight = true;
    Op weight_grad = input_grad;
    weight_grad.transpose_weight = false;
    weight_grad.transpose_input = true;
    const auto gi = make_training_op(input_grad), gw = make_training_op(weight_grad);
    for (GpuMode mode : {GpuMode::kernel, GpuMode::eager}) {
      const auto pf = predict_op(forward.op(), m, mode), pi = predict_op(gi.op(), m, mode), pw = predict_op(gw.op(), m, mode);
      CHECK(pi.time_s == pf.time_s);
      CHECK(pi.kernels.size() == pf.kernels.size());
      CHECK(pi.call != pf.call);
      CHECK(pw.flops == pf.flops);
      std::size_t gemms = 0;
      for (const auto& kern : pw.kernels) gemms += kern.name == "gemm" ? 1 : 0;
      CHECK(gemms == static_cast<std::size_t>(segments));
      REQUIRE(!pw.kernels.empty());
      CHECK(pw.kernels.back().name == "stack");
      CHECK(pw.time_s > 0);
    }
  }
}

TEST_CASE("training kinds equal hand-computed kernel times", "[gpu][model][training][formula]") {
  const GpuMachine m = round_machine();  // launch 2 us, L2 2e12 B/s achieved, aten_call 5 us
  const auto kernel = [&](const Op& op) { return predict_op(op, m, GpuMode::kernel); };
  const auto eager = [&](const Op& op) { return predict_op(op, m, GpuMode::eager); };

  SECTION("sum_to: one reduce kernel reading the gradient and writing the reduced shape") {
    // [4096, 64] to a bias row [1, 64]: (4096 * 64 + 64) * 4 bytes, within L2.
    const auto g = make_training_op(sum_to_op(4096, 64, 1, 64));
    const auto p = kernel(g.op());
    REQUIRE(p.kernels.size() == 1);
    const double bytes = (4096.0 * 64 + 64) * 4;
    CHECK(p.l2_bytes == Approx(bytes));
    CHECK(p.time_s == Approx(2e-6 + bytes / 2e12));
    CHECK(eager(g.op()).time_s == Approx(5e-6));  // one ATen sum: the host floor is the slower side
    // 16M x 8 floats (512 MiB) to per-row sums: beyond L2, so mostly DRAM at 1e12 B/s.
    const auto big = make_training_op(sum_to_op(1 << 24, 8, 1 << 24, 1));
    const auto q = kernel(big.op());
    const double big_bytes = (16777216.0 * 8 + 16777216.0) * 4;
    const double hit = q.l2_hit_fraction;
    CHECK(hit < 0.1);
    CHECK(q.time_s == Approx(2e-6 + big_bytes * hit / 2e12 + big_bytes * (1 - hit) / 1e12));
  }
  SECTION("unary_grad: relu is one threshold_backward, the cosine cutoff six kernels, gcn_norm's pow five") {
    const double elements = 1000.0 * 16;
    const auto relu = kernel(make_training_op(unary_grad_op(UnaryFn::relu, 1000, 16)).op());
    REQUIRE(relu.kernels.size() == 1);
    CHECK(relu.kernels[0].name == "threshold_backward");
    CHECK(relu.time_s == Approx(2e-6 + elements * 12 / 2e12));  // reads grad and the saved value, writes
    const auto cut = kernel(make_training_op(unary_grad_op(UnaryFn::cosine_cutoff, 1000, 16)).op());
    CHECK(cut.kernels.size() == 6);
    CHECK(cut.time_s == Approx(6 * 2e-6 + elements * (5 * 8 + 12) / 2e12));
    const auto pow = eager(make_training_op(unary_grad_op(UnaryFn::rsqrt_or_zero, 1000, 16)).op());
    CHECK(pow.kernels.size() == 5);
    CHECK(pow.host_floor_s == Approx(5 * 5e-6));
  }
  SECTION("cross entropy: log_softmax and nll_loss forward; seed, zeros, nll_loss_backward, log_softmax_backward") {
    const double rows = 1000, elements = rows * 7;
    const auto fwd = kernel(make_training_op(loss_op(OpKind::loss, LossFn::cross_entropy, 1000, 7)).op());
    REQUIRE(fwd.kernels.size() == 2);
    CHECK(fwd.time_s == Approx(2e-6 + elements * 8 / 2e12 + 2e-6 + (rows * (8 + 4) + 8) / 2e12));
    const auto bwd = eager(make_training_op(loss_op(OpKind::loss_grad, LossFn::cross_entropy, 1000, 7)).op());
    REQUIRE(bwd.kernels.size() == 4);
    CHECK(bwd.kernel_s == Approx(4 * 2e-6 + (4 + elements * 4 + rows * 12 + 8 + elements * 12) / 2e12));
    CHECK(bwd.host_floor_s == Approx(4 * 5e-6));
    const auto mse = kernel(make_training_op(loss_op(OpKind::loss_grad, LossFn::mse, 1000, 7)).op());
    CHECK(mse.kernels.size() == 3);
  }
  SECTION("row weights: reduction='none' times w, summed, over sum w; autograd's div and mul backwards before the loss's") {
    const double rows = 1000, elements = rows * 7;
    // Cross entropy: log_softmax, nll_loss (a value per row), mul by w, the two sums, clamp, div.
    const auto fwd = eager(make_training_op(loss_op(OpKind::loss, LossFn::cross_entropy, 1000, 7, true)).op());
    REQUIRE(fwd.kernels.size() == 7);
    CHECK(fwd.kernel_s == Approx(7 * 2e-6 + (elements * 8 + rows * (8 + 8) + rows * 12 + 2 * (rows + 1) * 4 + 8 + 12) / 2e12));
    CHECK(fwd.host_floor_s == Approx(7 * 5e-6));
    // Seed, div, mul by w, zeros, nll_loss_backward (a gradient per row in), log_softmax_backward.
    const auto bwd = eager(make_training_op(loss_op(OpKind::loss_grad, LossFn::cross_entropy, 1000, 7, true)).op());
    REQUIRE(bwd.kernels.size() == 6);
    CHECK(bwd.kernel_s == Approx(6 * 2e-6 + (4 + 12 + (2 * rows + 1) * 4 + elements * 4 + rows * 16 + elements * 12) / 2e12));
    CHECK(bwd.host_floor_s == Approx(6 * 5e-6));
    // mse: the squares, their row means, then as above; backward the mean's expand over C and
    // mse_loss_backward reading a full gradient.
    const auto mse = kernel(make_training_op(loss_op(OpKind::loss, LossFn::mse, 1000, 7, true)).op());
    REQUIRE(mse.kernels.size() == 7);
    CHECK(mse.time_s == Approx(7 * 2e-6 + (elements * 12 + (elements + rows) * 4 + rows * 12 + 2 * (rows + 1) * 4 + 8 + 12) / 2e12));
    const auto mse_grad = kernel(make_training_op(loss_op(OpKind::loss_grad, LossFn::mse, 1000, 7, true)).op());
    REQUIRE(mse_grad.kernels.size() == 6);
    CHECK(mse_grad.time_s == Approx(6 * 2e-6 + (4 + 12 + (2 * rows + 1) * 4 + (elements + rows) * 4 + elements * 4 + elements * 16) / 2e12));
    // Each weighted form moves more bytes than the unweighted one.
    for (LossFn fn : {LossFn::cross_entropy, LossFn::mse})
      for (OpKind kind : {OpKind::loss, OpKind::loss_grad}) {
        INFO(to_string(kind) << " " << to_string(fn));
        CHECK(kernel(make_training_op(loss_op(kind, fn, 1000, 7, true)).op()).l2_bytes >
              kernel(make_training_op(loss_op(kind, fn, 1000, 7)).op()).l2_bytes);
      }
  }
  SECTION("Adam alone: eight foreach kernels of 84 bytes per element; floor of 8 calls, the step and the parameter") {
    const auto g = make_training_op(step_op(adam(5e-4), 1000, 16));
    const auto p = eager(g.op());
    REQUIRE(p.kernels.size() == 8);
    CHECK(p.kernel_s == Approx(8 * 2e-6 + 16000.0 * 84 / 2e12));
    // Beyond the update: zero_grad's assignment of None (a view-cost call) and AccumulateGrad's node.
    const double around = round_machine().eager.aten_view_call_s + 7e-6;
    CHECK(p.host_floor_s == Approx(8 * 5e-6 + 100e-6 + 10e-6 + around));
    CHECK(p.time_s == Approx(p.host_floor_s));
    // Without weight decay the out-of-place add goes: 7 kernels, 72 bytes per element.
    CHECK(kernel(make_training_op(step_op(adam(0), 1000, 16)).op()).time_s == Approx(7 * 2e-6 + 16000.0 * 72 / 2e12));
    // Plain SGD is one _foreach_add_; with momentum and weight decay four.
    CHECK(kernel(make_training_op(step_op(sgd(0, 0), 1000, 16)).op()).time_s == Approx(2e-6 + 16000.0 * 12 / 2e12));
    CHECK(kernel(make_training_op(step_op(sgd(0.9, 1e-4), 1000, 16)).op()).kernels.size() == 4);
  }
  SECTION("a backward scatter_add is index_select's gradient: the same kernels, two ATen calls on the host") {
    const auto fwd = make_op(OpKind::scatter_add, shape(4096, 16, 512));
    OneOp bwd = make_op(OpKind::scatter_add, shape(4096, 16, 512));
    bwd.graph.ops.back().phase = OpPhase::backward;
    CHECK(kernel(bwd.op()).time_s == Approx(kernel(fwd.op()).time_s));
    CHECK(eager(bwd.op()).host_floor_s == Approx(2 * 5e-6));
    CHECK(eager(fwd.op()).host_floor_s == Approx(25e-6));  // torch_scatter's fitted floor
  }
}
