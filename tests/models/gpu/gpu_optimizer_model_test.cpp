// The GPU model's optimizer step (models/gpu/gpu_optimizer_model.cpp): one foreach step charging its
// launches and step floors once, torch.optim's per-parameter loop of PyTorch 1.x, and multi_tensor_apply's
// packing of tensors into launches.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "models/gpu/gpu_backend.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/gpu/gpu_model.hpp"
#include "tests/support/gpu_model_cases.hpp"

using namespace tilesim;
using namespace tilesim::gpu;
using namespace tilesim_test::gpu_cases;

TEST_CASE("one foreach step: launches and step floors charged once, bytes per parameter", "[gpu][model][training][formula]") {
  const GpuMachine m = round_machine();
  // Four parameters of a GCN on Cora (1433 x 16, 16, 16 x 7, 7) updated by one Adam step.
  OpGraph graph;
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {{1433, 16}, {1, 16}, {16, 7}, {1, 7}};
  const TensorId t = graph.add_tensor({"t", {1, 1}, DType::float32});
  double elements = 0;
  for (const auto& [rows, cols] : shapes) {
    Op op = step_op(adam(5e-4), rows, cols);
    op.name = "p" + std::to_string(graph.ops.size()) + ".step";
    op.input = graph.add_tensor({"p", {rows, cols}, DType::float32});
    op.weight = graph.add_tensor({"g", {rows, cols}, DType::float32});
    op.bias = graph.add_tensor({"s", {2, rows * cols}, DType::float32});
    op.aux = t;
    graph.add_op(op);
    elements += static_cast<double>(rows * cols);
  }
  const auto steps = foreach_steps(graph);
  const double around = m.eager.aten_view_call_s + m.eager.autograd_backward_node_s;  // zero_grad to None, AccumulateGrad
  REQUIRE(steps.size() == 4);
  CHECK(steps.at(0).parameter_elements == std::vector<std::int64_t>{1433 * 16, 16, 112, 7});
  CHECK(steps.at(3).position == 3);
  for (GpuMode mode : {GpuMode::kernel, GpuMode::eager}) {
    GpuModelBackend backend(m, mode, "gpu-model:round");
    backend.prepare(graph);
    const BackendResult r = backend.run(graph, TensorValues{}, RunOptions{});
    REQUIRE(r.ops.size() == 4);
    double kernels = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      const auto p = predict_op(graph.ops[i], m, mode, &steps.at(i));
      CHECK(r.ops[i].time_s == p.time_s);
      kernels += p.kernel_s;
      if (mode == GpuMode::eager) CHECK(p.host_floor_s == Approx((i == 0 ? 8 * 5e-6 + 100e-6 + 10e-6 : 10e-6) + around));
    }
    // Eight kernels launched once for the whole step (four tensors fit one launch), every element's
    // 84 bytes at the L2 rate: what the step's launches would cost as one op.
    CHECK(kernels == Approx(8 * 2e-6 + elements * 84 / 2e12));
    if (mode == GpuMode::eager) CHECK(r.time_s == Approx(8 * 5e-6 + 100e-6 + 4 * (10e-6 + around)));  // host bound
  }
  // Alone, each op would pay the launches again.
  CHECK(predict_op(graph.ops[2], m, GpuMode::kernel).kernel_s > predict_op(graph.ops[2], m, GpuMode::kernel, &steps.at(2)).kernel_s);
}

TEST_CASE("torch.optim's per-parameter loop (PyTorch 1.x): every parameter launches its own calls, zero_grad fills, AccumulateGrad adds",
          "[gpu][model][training][formula]") {
  GpuMachine m = round_machine();
  m.framework.optimizer = GpuMachine::Framework::Optimizer::per_parameter_loop;
  m.framework.zero_grad_fills = true;
  const double view = m.eager.aten_view_call_s;
  // Two parameters, Adam with weight decay: per parameter the loop's nine calls (add, mul_, add_,
  // mul_, addcmul_, sqrt, div, add_, addcdiv_: 92 bytes per element), zero_grad's fill (4) and
  // AccumulateGrad's add (12): eleven launches each, whatever its position in the step.
  OpGraph graph;
  const TensorId t = graph.add_tensor({"t", {1, 1}, DType::float32});
  for (std::int64_t cols : {16, 7}) {
    Op op = step_op(adam(5e-4), 100, cols);
    op.name = "p" + std::to_string(cols) + ".step";
    op.input = graph.add_tensor({"p", {100, cols}, DType::float32});
    op.weight = graph.add_tensor({"g", {100, cols}, DType::float32});
    op.bias = graph.add_tensor({"s", {2, 100 * cols}, DType::float32});
    op.aux = t;
    graph.add_op(op);
  }
  const auto steps = foreach_steps(graph);
  for (std::size_t i = 0; i < 2; ++i) {
    const double elements = static_cast<double>(graph.ops[i].shape.num_inputs * graph.ops[i].shape.num_features);
    const auto k = predict_op(graph.ops[i], m, GpuMode::kernel, &steps.at(i));
    REQUIRE(k.kernels.size() == 11);
    CHECK(k.kernels.front().name == "zero_grad_fill");
    CHECK(k.kernel_s == Approx(11 * 2e-6 + elements * (92 + 16) / 2e12));
    // Host: nine ATen calls and the parameter's Python; zero_grad's requires_grad_ and zero_;
    // AccumulateGrad's node and add; the first parameter also step()'s fixed Python, no foreach calls.
    const auto e = predict_op(graph.ops[i], m, GpuMode::eager, &steps.at(i));
    CHECK(e.host_floor_s == Approx(9 * 5e-6 + 10e-6 + (view + 5e-6) + (7e-6 + 5e-6) + (i == 0 ? 100e-6 : 0.0)));
  }
  // Without weight decay eight calls; plain SGD one, with momentum three; set_to_none drops the fill
  // and the add (and their calls), whichever the implementation.
  CHECK(predict_op(make_training_op(step_op(adam(0), 100, 16)).op(), m, GpuMode::kernel).kernels.size() == 10);
  CHECK(predict_op(make_training_op(step_op(sgd(0, 0), 100, 16)).op(), m, GpuMode::kernel).kernels.size() == 3);
  CHECK(predict_op(make_training_op(step_op(sgd(0.9, 0), 100, 16)).op(), m, GpuMode::kernel).kernels.size() == 5);
  m.framework.zero_grad_fills = false;
  const auto none = predict_op(make_training_op(step_op(adam(5e-4), 100, 16)).op(), m, GpuMode::eager);
  CHECK(none.kernels.size() == 9);
  CHECK(none.host_floor_s == Approx(9 * 5e-6 + 10e-6 + view + 7e-6 + 100e-6));
  // The shipped files describe PyTorch 1.x stacks: the loop and filled gradients.
  for (const char* name : {"a100-40gb", "a100-80gb", "h100-sxm", "h200", "v100-16gb"}) {
    INFO(name);
    const GpuMachine shipped = load_gpu_machine(name);
    CHECK(shipped.framework.optimizer == GpuMachine::Framework::Optimizer::per_parameter_loop);
    CHECK(shipped.framework.zero_grad_fills);
    CHECK(!shipped.framework.pytorch.empty());
  }
  CHECK(load_gpu_machine("v100-16gb").framework.pytorch == "1.8.1");
}

TEST_CASE("multi_tensor_apply packs tensors into launches by its argument limits", "[gpu][model][training][formula]") {
  const GpuMachine m = round_machine();
  // 130 parameters of 64 x 64 under Adam with weight decay: the three-list calls take 48 tensors a
  // launch (3 launches), lerp_ and sqrt 64 (3), mul_ and add_ 110 (2), div_ with its scalar list 96 (2),
  // addcdiv_ with its scalar list 48 (3): 21 launches, the count torch.profiler shows for this step
  // (PyTorch 2.11).
  ForeachStep step{std::vector<std::int64_t>(130, 64 * 64), 0};
  const auto g = make_training_op(step_op(adam(5e-4), 64, 64));
  const auto first = predict_op(g.op(), m, GpuMode::kernel, &step);
  double launches = 0;
  for (const auto& k : first.kernels) launches += k.time_s;
  const double bytes = 4096.0 * 84;  // this op's own elements; the step's 130 x 4096 x 4 x 6 bytes fit L2
  CHECK(launches == Approx(21 * 2e-6 + bytes / 2e12));
  step.position = 7;
  CHECK(predict_op(g.op(), m, GpuMode::kernel, &step).kernel_s == Approx(bytes / 2e12));
  // One tensor of 320 chunks of 65536 elements and one more element: each call launches twice.
  const std::int64_t big = 320 * 65536 + 1;
  ForeachStep one{{big}, 0};
  const auto b = make_training_op(step_op(sgd(0, 0), 1, big));
  const auto p = predict_op(b.op(), m, GpuMode::kernel, &one);
  const double hit = p.l2_hit_fraction;
  const double traffic = static_cast<double>(big) * 12;
  CHECK(p.time_s == Approx(2 * 2e-6 + traffic * hit / 2e12 + traffic * (1 - hit) / 1e12));
  // A step that does not list the op's parameter at its position is a caller's mistake.
  ForeachStep wrong{{5}, 0};
  CHECK_THROWS_AS(predict_op(g.op(), m, GpuMode::kernel, &wrong), std::invalid_argument);
}
