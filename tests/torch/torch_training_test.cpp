// torch-cpu's training steps through autograd and torch::optim: loss, gradients and updates against the
// reference and the cpu backend, the checks that catch a wrong step, and each op kind's backward
// against libtorch's autograd.
#include <catch2/catch.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "common/error.hpp"
#include "ir/op_graph.hpp"
#include "ir/reference/compare.hpp"
#include "ir/reference/reference_ops.hpp"
#include "ir/tensor_values.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/torch/accumulation_probe.hpp"
#include "kernels/torch/torch_backend.hpp"
#include "kernels/torch/torch_ops.hpp"
#include "kernels/torch/training_checks.hpp"
#include "kernels/torch/training_graph.hpp"
#include "tests/support/op_backward_cases.hpp"
#include "tests/torch/torch_test_support.hpp"

using namespace tilesim;
namespace cpu = tilesim::kernels::cpu;
namespace peer = tilesim::kernels::torch_peer;
namespace reference = tilesim::reference;
using nlohmann::json;
using namespace tilesim_torch_test;

TEST_CASE("torch-cpu trains with autograd and torch::optim: loss, gradients and updates against the reference and the cpu backend",
          "[torch][training][unit]") {
  for (const auto& [name, s] : training_cases()) {
    INFO(name);
    REQUIRE(s.training.active());
    auto torch_backend = peer::make_backend();
    RunOptions options;
    options.warmup = 1;
    options.repeats = 2;
    const BackendResult result = torch_backend->run(s.graph, s.values, options);

    // One row per phase, in step order, each timed and checked.
    REQUIRE(result.ops.size() == 4);
    const OpPhase phases[] = {OpPhase::forward, OpPhase::loss, OpPhase::backward, OpPhase::optimizer};
    double total = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      const OpResult& row = result.ops[i];
      INFO(row.op << ": " << row.verification);
      REQUIRE(row.phase.has_value());
      CHECK(*row.phase == phases[i]);
      CHECK(row.verified == true);
      CHECK(row.time_s > 0);
      CHECK(row.timing.at("repeats") == 2);
      total += row.time_s;
    }
    CHECK(result.time_s == Approx(total));
    CHECK_THAT(result.ops[2].op, Catch::Contains("autograd"));
    CHECK_THAT(result.ops[3].op, Catch::Contains(name == "molecules" ? "torch::optim::SGD" : "torch::optim::Adam"));
    CHECK(result.host.at("rows").get<std::string>().find("per phase") != std::string::npos);

    const TensorValues& torch_values = *torch_backend->computed_outputs();
    const TensorValues reference_values = reference_step(s);
    // The loss: torch's forward and cross_entropy / mse_loss against the reference's from the same inputs.
    CHECK(torch_values.f32(s.training.loss).at(0) == Approx(reference_values.f32(s.training.loss).at(0)).epsilon(1e-5));

    // Every gradient the updates read: autograd's against the graph's backward ops through the reference,
    // both from the step's inputs (not from torch's activations, as the backend's own check does).
    for (const auto& slot : s.training.parameters) {
      INFO(s.graph.tensor(slot.param).name);
      CHECK(relative_difference(torch_values.f32(slot.grad), reference_values.f32(slot.grad)) <= peer::kGradientRelativeBound);
    }

    // The updates against the cpu backend's (its graph's own backward and update kernels).
    cpu::CpuBackend cpu_backend;
    const BackendResult cpu_result = cpu_backend.run(s.graph, s.values, once());
    for (const auto& slot : s.training.parameters) {
      const std::size_t p = s.values.f32(slot.param).size();
      const std::vector<float>& ours = cpu_backend.outputs().f32(slot.update);
      const std::vector<float>& theirs = torch_values.f32(slot.update);
      REQUIRE(theirs.size() == ours.size());
      INFO(s.graph.tensor(slot.param).name);
      // The parameter row, then each state row, on its own scale.
      for (std::size_t row = 0; row * p < ours.size(); ++row) {
        INFO("row " << row);
        const std::vector<float> a(theirs.begin() + static_cast<std::ptrdiff_t>(row * p), theirs.begin() + static_cast<std::ptrdiff_t>((row + 1) * p));
        const std::vector<float> b(ours.begin() + static_cast<std::ptrdiff_t>(row * p), ours.begin() + static_cast<std::ptrdiff_t>((row + 1) * p));
        CHECK(relative_difference(a, b) <= peer::kGradientRelativeBound);
      }
      CHECK(theirs != s.values.f32(slot.param));  // the parameter moved
    }
  }
}

TEST_CASE("torch-cpu's training steps follow the cpu backend's loss curve, each step a pure function of its inputs",
          "[torch][training][unit]") {
  for (const auto& [name, s] : training_cases()) {
    INFO(name);
    auto torch_backend = peer::make_backend();
    cpu::CpuBackend cpu_backend;
    TensorValues torch_inputs = s.values, cpu_inputs = s.values;
    std::vector<double> torch_loss, cpu_loss;
    for (int step = 0; step < 2; ++step) {
      torch_backend->run(s.graph, torch_inputs, once());
      torch_loss.push_back(torch_backend->computed_outputs()->f32(s.training.loss).at(0));
      workloads::training::advance_step(s.training, *torch_backend->computed_outputs(), torch_inputs);
      cpu_backend.run(s.graph, cpu_inputs, once());
      cpu_loss.push_back(cpu_backend.outputs().f32(s.training.loss).at(0));
      workloads::training::advance_step(s.training, cpu_backend.outputs(), cpu_inputs);
    }
    CHECK(torch_loss[1] != torch_loss[0]);  // the second step saw the first step's update
    for (std::size_t k = 0; k < 2; ++k) {
      INFO("step " << k + 1);
      CHECK(torch_loss[k] == Approx(cpu_loss[k]).epsilon(1e-5));
    }
    // Running the first step's inputs again gives the first step's loss: no state survives a run.
    torch_backend->run(s.graph, s.values, once());
    CHECK(torch_backend->computed_outputs()->f32(s.training.loss).at(0) == torch_loss[0]);
  }
}

TEST_CASE("torch-cpu reports a bfloat16 step's gradients unchecked where libtorch sums bfloat16 products in bfloat16",
          "[torch][training][bfloat16][unit]") {
  // A bfloat16 GCN step; its gradients compared as the host's probe says torch accumulates, and as the
  // other kind of host would.
  json doc = {{"name", "t"}, {"seed", 11}, {"dtype", "bfloat16"},
              {"graph", {{"generator", "erdos_renyi"}, {"num_nodes", 30}, {"num_edges", 110}}}, {"num_features", 5},
              {"model", json::array({{{"layer", "gcn"}, {"name", "c1"}, {"out", 6}, {"activation", "relu"}},
                                     {{"layer", "gcn"}, {"name", "c2"}, {"out", 3}}})},
              {"train", {{"task", "node"}, {"loss", "cross_entropy"}, {"optimizer", {{"kind", "sgd"}, {"lr", 0.01}}}}}};
  const workloads::Instance s = workloads::instantiate(workloads::parse_workload(doc, "t.json"));
  auto torch_backend = peer::make_backend();
  const BackendResult result = torch_backend->run(s.graph, s.values, once());
  const TensorValues& computed = *torch_backend->computed_outputs();
  const peer::TrainingStepPlan plan = peer::plan_training_step(s.graph, "test");
  reference::Accumulation in_dtype, float32;
  in_dtype.bfloat16 = reference::DotAccumulation::in_dtype;
  const peer::PhaseCheck unchecked = peer::check_gradients(s.graph, plan, s.values, computed, in_dtype);
  INFO(unchecked.detail);
  CHECK_FALSE(unchecked.checked);
  CHECK_THAT(unchecked.detail, Catch::Contains("not checked") && Catch::Contains("partial sums in bfloat16") &&
                                   Catch::Contains("largest difference"));
  // With float32 accumulators the same comparison is a check, which a gradient twice too large fails.
  TensorValues doubled = computed;
  for (float& g : doubled.mutable_f32(plan.parameters.front().grad)) g *= 2.0f;
  const peer::PhaseCheck checked = peer::check_gradients(s.graph, plan, s.values, doubled, float32);
  CHECK(checked.checked);
  CHECK_FALSE(checked.ok);
  // The backend's own row follows this host's probe: unset exactly where the probe found bfloat16 sums.
  const bool host_in_dtype = peer::host_accumulation().accumulation.bfloat16 == reference::DotAccumulation::in_dtype;
  for (const OpResult& row : result.ops)
    if (row.phase == OpPhase::backward) {
      INFO(row.verification);
      CHECK(row.verified.has_value() == !host_in_dtype);
    }
}

TEST_CASE("torch-cpu's training checks catch a wrong gradient, update or activation", "[torch][training][unit]") {
  const auto cases = training_cases();
  const workloads::Instance& s = cases.at(1).second;  // the GAT: gradients through softmax and the block mask
  auto torch_backend = peer::make_backend();
  torch_backend->run(s.graph, s.values, once());
  const TensorValues& computed = *torch_backend->computed_outputs();
  const peer::TrainingStepPlan plan = peer::plan_training_step(s.graph, "test");
  REQUIRE(plan.parameters.size() == s.training.parameters.size());
  const peer::PhaseCheck clean = peer::check_gradients(s.graph, plan, s.values, computed);
  INFO(clean.detail);
  REQUIRE(clean.ok);

  for (const peer::TrainedParameter& p : plan.parameters) {
    const std::string name = s.graph.tensor(p.param).name;
    INFO(name);
    // A gradient 1% too large: far outside the 2^-12 bound.
    TensorValues scaled = computed;
    for (float& g : scaled.mutable_f32(p.grad)) g *= 1.01f;
    const peer::PhaseCheck check = peer::check_gradients(s.graph, plan, s.values, scaled);
    CHECK_FALSE(check.ok);
    CHECK_THAT(check.detail, Catch::Contains(name));
  }
  // One element of one gradient replaced by its negation.
  {
    TensorValues flipped = computed;
    std::vector<float>& g = flipped.mutable_f32(plan.parameters.front().grad);
    const auto largest = std::max_element(g.begin(), g.end(), [](float a, float b) { return std::fabs(a) < std::fabs(b); });
    *largest = -*largest;
    CHECK_FALSE(peer::check_gradients(s.graph, plan, s.values, flipped).ok);
  }
  // The host's half accumulation leaves a float32 model's gradients checked: a wrong one still fails.
  {
    reference::Accumulation in_dtype;
    in_dtype.float16 = in_dtype.bfloat16 = reference::DotAccumulation::in_dtype;
    TensorValues scaled = computed;
    for (float& g : scaled.mutable_f32(plan.parameters.front().grad)) g *= 1.01f;
    const peer::PhaseCheck check = peer::check_gradients(s.graph, plan, s.values, scaled, in_dtype);
    CHECK(check.checked);
    CHECK_FALSE(check.ok);
  }
  // An update that skipped the step, and a forward output off by one part in 10^3.
  std::vector<std::size_t> steps;
  for (const peer::TrainedParameter& p : plan.parameters) steps.push_back(p.step_op);
  CHECK(peer::check_ops(s.graph, steps, s.values, computed, "updates").ok);
  TensorValues stale = computed;
  const Op& first_step = s.graph.ops[steps.front()];
  const std::vector<float>& param = s.values.f32(first_step.input);
  std::copy(param.begin(), param.end(), stale.mutable_f32(first_step.output).begin());
  const peer::PhaseCheck stale_check = peer::check_ops(s.graph, steps, s.values, stale, "updates");
  CHECK_FALSE(stale_check.ok);
  CHECK_THAT(stale_check.detail, Catch::Contains(first_step.name));
  TensorValues drifted = computed;
  const Op& matmul = s.graph.ops[plan.forward_ops.front()];
  for (float& v : drifted.mutable_f32(matmul.output)) v *= 1.001f;
  CHECK_FALSE(peer::check_ops(s.graph, {plan.forward_ops.front()}, s.values, drifted, "forward ops").ok);
}

TEST_CASE("torch-cpu refuses a training graph it cannot record, naming the op", "[torch][training][unit]") {
  auto cases = training_cases();
  workloads::Instance& s = cases.at(0).second;
  OpGraph graph = s.graph;
  // A forward op turned into a transposed matmul: a backward kind autograd computes itself.
  for (Op& op : graph.ops)
    if (op.kind == OpKind::matmul && op.phase == OpPhase::forward) {
      op.transpose_weight = true;
      CHECK_THROWS_WITH(peer::make_backend()->run(graph, s.values, once()), Catch::Contains("'" + op.name + "'") && Catch::Contains("transposed"));
      break;
    }
  // A missing parameter value names the op that reads it.
  TensorValues missing = s.values;
  const TensorId param = s.training.parameters.front().param;
  missing.set_f32(param, {1.0f});
  CHECK_THROWS_WITH(peer::make_backend()->run(s.graph, missing, once()), Catch::Contains(s.graph.tensor(param).name));
}

TEST_CASE("each op kind's backward agrees with libtorch's autograd (tests/op_backward_cases.hpp)", "[torch][training][unit]") {
  const auto cases = tilesim_test::op_backward_cases();
  REQUIRE(cases.size() == 38);
  for (const auto& c : cases) {
    INFO(c.name);
    auto torch_backend = peer::make_backend();
    const BackendResult result = torch_backend->run(c.graph, c.values, once());
    // The peer's own checks: its forward and loss against the reference, autograd's gradients against
    // the graph's backward ops through the reference, and its updates.
    for (const OpResult& row : result.ops) {
      INFO(row.op << ": " << row.verification);
      CHECK(row.verified == true);
    }
    // And here, from the step's inputs alone: the graph's backward by the reference beside autograd's.
    TensorValues values = c.values;
    for (const Op& op : c.graph.ops) values.set_f32(op.output, reference::compute(op, values));
    const TensorValues& torch_values = *torch_backend->computed_outputs();
    for (const auto& [param, grad] : c.grads) {
      INFO(c.graph.tensor(param).name);
      CHECK(relative_difference(torch_values.f32(grad), values.f32(grad)) <= peer::kGradientRelativeBound);
    }
  }
}

TEST_CASE("torch-cpu's weighted loss: weight-0 rows drop out of loss and gradients, a loss_grad weighing rows otherwise is refused",
          "[torch][training][unit]") {
  namespace detail = tilesim_test::op_backward_detail;
  const std::vector<float> mask = {1, 0, 1, 1, 0, 1};  // a batch of 4 padded to 6
  const std::vector<float> x = detail::distinct_values(18, 21), w = detail::distinct_values(9, 22);
  const std::vector<std::int32_t> labels = {2, 0, 1, 1, 2, 0};
  for (const LossFn fn : {LossFn::cross_entropy, LossFn::mse}) {
    INFO(to_string(fn));
    // The padded step and the unpadded one over the rows of weight 1 (mse's targets are seeded by shape,
    // so the unpadded step gets the padded one's kept rows explicitly).
    detail::Builder padded_b("padded");
    const TensorId px = padded_b.param("x", {6, 3}, x), pw = padded_b.param("w", {3, 3}, w);
    detail::LossChoice weighted;
    weighted.fn = fn;
    weighted.labels = labels;
    weighted.row_weights = mask;
    const tilesim_test::OpBackwardCase padded =
        padded_b.finish(workloads::layers::matmul("matmul", padded_b.graph(), px, pw, -1), weighted);
    std::vector<float> kept_x;
    std::vector<std::int32_t> kept_labels;
    for (std::size_t r = 0; r < mask.size(); ++r)
      if (mask[r] == 1.0f) {
        kept_x.insert(kept_x.end(), x.begin() + static_cast<std::ptrdiff_t>(3 * r), x.begin() + static_cast<std::ptrdiff_t>(3 * r + 3));
        kept_labels.push_back(labels[r]);
      }
    detail::Builder kept_b("kept");
    const TensorId kx = kept_b.param("x", {4, 3}, kept_x), kw = kept_b.param("w", {3, 3}, w);
    detail::LossChoice plain;
    plain.fn = fn;
    plain.labels = kept_labels;
    tilesim_test::OpBackwardCase kept = kept_b.finish(workloads::layers::matmul("matmul", kept_b.graph(), kx, kw, -1), plain);
    const Op& padded_loss = *std::find_if(padded.graph.ops.begin(), padded.graph.ops.end(), [](const Op& op) { return op.kind == OpKind::loss; });
    const Op& kept_loss = *std::find_if(kept.graph.ops.begin(), kept.graph.ops.end(), [](const Op& op) { return op.kind == OpKind::loss; });
    if (fn == LossFn::mse) {
      std::vector<float> kept_t;
      const std::vector<float>& t = padded.values.f32(padded_loss.weight);
      for (std::size_t r = 0; r < mask.size(); ++r)
        if (mask[r] == 1.0f) kept_t.insert(kept_t.end(), t.begin() + static_cast<std::ptrdiff_t>(3 * r), t.begin() + static_cast<std::ptrdiff_t>(3 * r + 3));
      kept.values.set_f32(kept_loss.weight, kept_t);
    }
    auto run = [](const tilesim_test::OpBackwardCase& c) {
      auto backend = peer::make_backend();
      const BackendResult result = backend->run(c.graph, c.values, once());
      for (const OpResult& row : result.ops) {
        INFO(row.op << ": " << row.verification);
        CHECK(row.verified == true);
      }
      return *backend->computed_outputs();
    };
    const TensorValues a = run(padded), b = run(kept);
    CHECK(a.f32(padded_loss.output).at(0) == Approx(b.f32(kept_loss.output).at(0)).epsilon(1e-6));
    const auto grad_of = [](const tilesim_test::OpBackwardCase& c, TensorId param) {
      for (const auto& [p, g] : c.grads)
        if (p == param) return g;
      FAIL("no gradient for the parameter");
      return TensorId{-1};
    };
    // The weight's gradient sums the kept rows only; the padding rows of x get none.
    const std::vector<float>& gw_padded = a.f32(grad_of(padded, pw));
    const std::vector<float>& gw_kept = b.f32(grad_of(kept, kw));
    for (std::size_t i = 0; i < gw_kept.size(); ++i) CHECK(gw_padded[i] == Approx(gw_kept[i]).epsilon(1e-5).margin(1e-7));
    const std::vector<float>& gx_padded = a.f32(grad_of(padded, px));
    const std::vector<float>& gx_kept = b.f32(grad_of(kept, kx));
    std::size_t k = 0;
    for (std::size_t r = 0; r < mask.size(); ++r)
      for (std::size_t j = 0; j < 3; ++j) {
        if (mask[r] == 0.0f) CHECK(gx_padded[3 * r + j] == 0.0f);
        else CHECK(gx_padded[3 * r + j] == Approx(gx_kept[k++]).epsilon(1e-5).margin(1e-7));
      }
    // The graph's loss_grad without the loss's weights: autograd's gradient would not stand for it.
    OpGraph mismatched = padded.graph;
    for (Op& op : mismatched.ops)
      if (op.kind == OpKind::loss_grad) op.aux = -1;
    CHECK_THROWS_WITH(peer::make_backend()->run(mismatched, padded.values, once()), Catch::Contains("row weights differ"));
  }
}

// ---- Mixed precision: casts, and a half model's training step as torch.amp runs one ----
