// The torch-cpu peer: the backend end to end (verified outputs, agreement with the cpu backend, the
// thread count in its host JSON), each ATen call the benchmark compares against, checked against
// the references so that the benchmark's peer computes what tilesim's kernel does, and training steps
// through autograd and torch::optim against the reference and the cpu backend. Its own executable:
// linking libtorch costs every process ~0.3 s at start, which tilesim_tests' many processes should not pay.
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
#include "tests/support/cpu_op_cases.hpp"
#include "tests/support/dtype_cases.hpp"
#include "tests/support/op_backward_cases.hpp"
#include "tests/support/random_inputs.hpp"
#include "workloads/workload.hpp"

using namespace tilesim;
namespace cpu = tilesim::kernels::cpu;
namespace peer = tilesim::kernels::torch_peer;
namespace reference = tilesim::reference;

namespace {

using tilesim_test::random_indices;
using tilesim_test::random_values;

}  // namespace

TEST_CASE("torch-cpu runs a graph, verified, on the cpu backend's thread count, and agrees with the cpu backend", "[torch][backend][unit][slow]") {
  REQUIRE(peer::built_in());
  OpGraph graph;
  graph.add_gather_scatter("lookup", OpKind::gather, DType::float32, {300, 17, 2000});
  graph.add_gather_scatter("aggregate", OpKind::scatter_add, DType::float32, {2000, 17, 64});
  graph.add_gather_scatter("large", OpKind::scatter_add, DType::float32, {5000, 33, 4000});
  graph.ops[1].input = graph.ops[0].output;  // the scatter sums the gathered rows
  std::mt19937 rng(8);
  TensorValues inputs;
  inputs.set_f32(graph.ops[0].input, random_values(300 * 17, rng));
  inputs.set_i32(graph.ops[0].indices, random_indices(2000, 300, rng));
  inputs.set_i32(graph.ops[1].indices, random_indices(2000, 64, rng));
  inputs.set_f32(graph.ops[2].input, random_values(5000 * 33, rng));
  inputs.set_i32(graph.ops[2].indices, random_indices(5000, 4000, rng));

  auto torch_backend = peer::make_backend();
  RunOptions options;
  options.warmup = 1;
  options.repeats = 3;
  const BackendResult result = torch_backend->run(graph, inputs, options);
  CHECK(torch_backend->name() == "torch-cpu");
  CHECK(result.backend == "torch-cpu");
  CHECK(result.kind == ResultKind::measured);
  CHECK(result.host.at("aten_threads") == omp_get_max_threads());
  CHECK(result.host.at("omp_max_threads") == omp_get_max_threads());
  CHECK(result.host.at("torch_version").get<std::string>() == peer::version());
  CHECK(result.host.at("aten_calls").contains("scatter_add"));
  REQUIRE(result.ops.size() == 3);
  for (const OpResult& row : result.ops) {
    INFO(row.op << ": " << row.verification);
    CHECK(row.verified == true);
    CHECK(row.time_s > 0);
  }

  cpu::CpuBackend cpu_backend;
  cpu_backend.run(graph, inputs, options);
  const TensorValues* ours = cpu_backend.computed_outputs();
  const TensorValues* theirs = torch_backend->computed_outputs();
  REQUIRE(theirs != nullptr);
  for (const Op& op : graph.ops) {
    // compare_outputs reads the op's operands from one TensorValues: the chained scatter's input is the gather's output.
    TensorValues operands = inputs;
    if (ours->has(op.input)) operands.set_f32(op.input, ours->f32(op.input));
    const auto agreement = reference::compare_outputs(op, operands, ours->f32(op.output), theirs->f32(op.output));
    INFO(op.name << ": " << agreement.detail);
    CHECK(agreement.equal);
  }
}

TEST_CASE("torch-cpu rejects an index out of range before timing anything", "[torch][backend][unit][slow]") {
  OpGraph graph;
  const Op& op = graph.add_gather_scatter("bad", OpKind::gather, DType::float32, {4, 2, 3});
  TensorValues inputs;
  inputs.set_f32(op.input, std::vector<float>(8, 1.0f));
  inputs.set_i32(op.indices, {0, 4, 1});
  CHECK_THROWS_WITH(peer::make_backend()->run(graph, inputs, RunOptions{}), Catch::Contains("indices[1] = 4 is outside [0, 4)"));
}

TEST_CASE("the benchmark's ATen calls compute what tilesim's kernels do", "[torch][peer][unit][slow]") {
  peer::set_num_threads(omp_get_max_threads());
  CHECK(peer::num_threads() == omp_get_max_threads());
  std::mt19937 rng(9);
  const std::int64_t messages = 3000, features = 19, outputs = 250;
  const auto src = random_values(messages * features, rng);
  const auto indices = random_indices(messages, outputs, rng);
  std::vector<float> out(static_cast<std::size_t>(outputs * features), std::numeric_limits<float>::quiet_NaN());

  SECTION("scatter sum, mean and amax (PyG's scatter, rows with no message 0)") {
    const std::pair<cpu::Reduce, reference::Reduction> reductions[] = {{cpu::Reduce::sum, reference::Reduction::sum},
                                                                       {cpu::Reduce::mean, reference::Reduction::mean},
                                                                       {cpu::Reduce::max, reference::Reduction::max}};
    // 400 rows for 3000 messages: some rows get none.
    const auto sparse = random_indices(messages, 4000, rng);
    std::vector<float> wide(static_cast<std::size_t>(4000 * features));
    for (const auto& [ours, theirs] : reductions) {
      peer::scatter(ours, src.data(), messages, features, sparse.data(), 4000, wide.data())();
      const auto v = reference::check("torch scatter", features, wide, reference::scatter_reduce(theirs, src, features, sparse, 4000, 0));
      INFO(v.detail);
      CHECK(v.ok);
    }
  }
  SECTION("index_add_") {
    peer::index_add(src.data(), messages, features, indices.data(), outputs, out.data())();
    const auto v = reference::check("torch index_add_", features, out,
                                    reference::scatter_reduce(reference::Reduction::sum, src, features, indices, outputs, 0));
    INFO(v.detail);
    CHECK(v.ok);
  }
  SECTION("index_select") {
    const auto lookups = random_indices(700, messages, rng);
    std::vector<float> gathered(static_cast<std::size_t>(700 * features));
    peer::index_select(src.data(), messages, features, lookups.data(), 700, gathered.data())();
    CHECK(gathered == reference::gather(src, features, lookups));
  }
  SECTION("segment_reduce sum over CSR offsets, empty segments 0") {
    const auto sorted = random_indices(messages, 4000, rng, true);
    const auto offsets = cpu::segment_offsets(sorted.data(), messages, 4000);
    std::vector<float> seg(static_cast<std::size_t>(4000 * features));
    peer::segment_reduce(cpu::Reduce::sum, src.data(), messages, features, offsets.data(), 4000, seg.data())();
    const auto v = reference::check("torch segment_reduce", features, seg,
                                    reference::segment_reduce(reference::Reduction::sum, src, features, offsets, 0));
    INFO(v.detail);
    CHECK(v.ok);
  }
  SECTION("unfused gather-scale-scatter") {
    const auto x = random_values(outputs * features, rng);
    const auto w = random_values(messages, rng);
    const auto src_nodes = random_indices(messages, outputs, rng);
    peer::gather_scale_scatter(x.data(), outputs, features, src_nodes.data(), indices.data(), w.data(), messages, outputs, out.data())();
    const auto v = reference::check("torch spmm", features, out,
                                    reference::gather_scale_scatter(x, features, src_nodes, indices, w, outputs, 0));
    INFO(v.detail);
    CHECK(v.ok);
  }
  SECTION("mm and addmm") {
    const std::int64_t m = 70, k = 33, n = 19;
    const auto a = random_values(m * k, rng), b = random_values(k * n, rng), bias = random_values(n, rng);
    std::vector<float> c(static_cast<std::size_t>(m * n));
    peer::mm(a.data(), b.data(), m, k, n, nullptr, c.data())();
    CHECK(reference::check("torch mm", n, c, reference::matmul(a, b, m, k, n, {})).ok);
    peer::mm(a.data(), b.data(), m, k, n, bias.data(), c.data())();
    CHECK(reference::check("torch addmm", n, c, reference::matmul(a, b, m, k, n, bias)).ok);
  }
}

TEST_CASE("torch-cpu runs every GNN op kind, verified, and agrees with the cpu backend", "[torch][gnn-ops][unit][slow]") {
  using namespace tilesim_test;
  std::vector<OpCase> cases;
  OpCaseBuilder idx(31);
  auto even_rows = idx.random_indices(500, 30);
  for (auto& i : even_rows) i *= 2;  // odd rows of 60 get no message: 0 for mean and max
  cases.push_back(scatter_case(OpKind::scatter_mean, 9, 60, even_rows, 1));
  cases.push_back(scatter_case(OpKind::scatter_max, 9, 60, even_rows, 2));
  cases.push_back(degree_case(70, idx.random_indices(900, 70)));
  cases.push_back(matmul_case(50, 24, 10, true, 3));
  cases.push_back(matmul_case(50, 24, 10, false, 4));
  cases.push_back(segment_matmul_case({0, 12, 40, 0, 5}, 8, 6, 5));
  for (UnaryFn fn : {UnaryFn::relu, UnaryFn::leaky_relu, UnaryFn::shifted_softplus, UnaryFn::exp, UnaryFn::scale,
                     UnaryFn::rsqrt_or_zero, UnaryFn::reciprocal_or_zero, UnaryFn::cosine_cutoff, UnaryFn::sigmoid, UnaryFn::softplus,
                     UnaryFn::sqrt, UnaryFn::log, UnaryFn::clamp_min})
    cases.push_back(unary_case(fn, fn == UnaryFn::leaky_relu ? 0.2f : fn == UnaryFn::cosine_cutoff ? 6.0f : 1.5f, 40, 6, 6, -8, 8));
  for (BinaryFn fn : {BinaryFn::add, BinaryFn::subtract, BinaryFn::multiply, BinaryFn::divide, BinaryFn::equal}) {
    cases.push_back(binary_case(fn, 30, 8, 30, 8, 7));
    cases.push_back(binary_case(fn, 30, 8, 30, 1, 8));
    cases.push_back(binary_case(fn, 30, 8, 30, 4, 9));
    cases.push_back(binary_case(fn, 30, 8, 1, 8, 10));
  }
  RunOptions options;
  options.warmup = 0;
  options.repeats = 2;
  auto torch_backend = peer::make_backend();
  cpu::CpuBackend cpu_backend;
  for (const OpCase& c : cases) {
    const Op& op = c.op();
    INFO(op.name << " " << to_string(op.kind) << (op.kind == OpKind::unary ? " " + to_string(op.unary) : "")
                 << (op.kind == OpKind::binary ? " " + to_string(op.binary) + " other " + std::to_string(op.shape.other_rows) + " x " +
                                                     std::to_string(op.shape.other_groups)
                                               : ""));
    const BackendResult result = torch_backend->run(c.graph, c.values, options);
    REQUIRE(result.ops.size() == 1);
    INFO(result.ops[0].verification);
    CHECK(result.ops[0].verified == true);
    cpu_backend.run(c.graph, c.values, options);
    const auto agreement = reference::compare_outputs(op, c.values, cpu_backend.outputs().f32(op.output),
                                                      torch_backend->computed_outputs()->f32(op.output));
    INFO(agreement.detail);
    CHECK(agreement.equal);
  }
}

// ---- Training steps: libtorch's autograd and torch::optim as the peer and as an oracle ----

namespace {

using nlohmann::json;

json training_workload(json graph, std::int64_t features, json model, json train) {
  return {{"name", "t"}, {"seed", 11}, {"graph", graph}, {"num_features", features}, {"model", model}, {"train", train}};
}

// A GCN on a node task with a training mask, a two-head GAT whose attention gradients go through the
// block mask (both Adam), a graph task on a molecules batch with a mean pool and SGD with momentum, and
// an RGCN over three relations (segment_matmul, Adam).
// Adam's first step moves each element by about lr * g / |g| however small g is, so a gradient element
// at rounding level would step the two backends apart; the weight decay keeps g + wd p away from zero.
std::vector<std::pair<std::string, workloads::Instance>> training_cases() {
  const json er = {{"generator", "erdos_renyi"}, {"num_nodes", 30}, {"num_edges", 110}};
  const json molecules = {{"generator", "molecules"}, {"num_graphs", 4}, {"min_nodes", 3}, {"max_nodes", 6}};
  std::vector<std::pair<std::string, json>> docs = {
      {"gcn",
       training_workload(er, 6,
                         json::array({{{"layer", "gcn"}, {"name", "c1"}, {"out", 8}, {"activation", "relu"}},
                                      {{"layer", "gcn"}, {"name", "c2"}, {"out", 4}}}),
                         {{"task", "node"}, {"loss", "cross_entropy"}, {"train_fraction", 0.5},
                          {"optimizer", {{"kind", "adam"}, {"lr", 0.01}, {"weight_decay", 5e-4}}}})},
      {"gat",
       training_workload(er, 5,
                         json::array({{{"layer", "gat"}, {"name", "a1"}, {"out", 3}, {"heads", 2}, {"activation", "relu"}},
                                      {{"layer", "gat"}, {"name", "a2"}, {"out", 3}}}),
                         {{"task", "node"}, {"loss", "cross_entropy"}, {"optimizer", {{"kind", "adam"}, {"lr", 0.02}, {"weight_decay", 1e-3}}}})},
      {"molecules",
       training_workload(molecules, 4,
                         json::array({{{"layer", "gin"}, {"name", "g1"}, {"out", 6}, {"activation", "relu"}},
                                      {{"layer", "sage"}, {"name", "s2"}, {"out", 3}}}),
                         {{"task", "graph"}, {"loss", "mse"}, {"pool", "mean"},
                          {"optimizer", {{"kind", "sgd"}, {"lr", 0.05}, {"momentum", 0.9}, {"weight_decay", 1e-3}}}})},
      // FiLM: two FiLM layers (mean, then max aggregation), their gradients through gathers by source
      // and by destination.
      {"film",
       training_workload(molecules, 4,
                         json::array({{{"layer", "film"}, {"name", "f1"}, {"out", 6}},
                                      {{"layer", "film"}, {"name", "f2"}, {"out", 3}, {"aggr", "max"}}}),
                         {{"task", "graph"}, {"loss", "cross_entropy"}, {"pool", "add"},
                          {"optimizer", {{"kind", "adam"}, {"lr", 0.01}}}})},
      // CGConv: sigmoid and softplus and their backward through autograd, a residual.
      {"cgconv",
       training_workload(molecules, 4,
                         json::array({{{"layer", "cgconv"}, {"name", "c1"}}, {{"layer", "linear"}, {"name", "readout"}, {"out", 3}}}),
                         {{"task", "graph"}, {"loss", "cross_entropy"}, {"pool", "mean"},
                          {"optimizer", {{"kind", "adam"}, {"lr", 0.01}, {"weight_decay", 1e-3}}}})},
      // RGCN: segment_matmul recorded per segment, its weight's and input's gradients from autograd checked
      // against the graph's transposed segment_matmuls.
      {"rgcn",
       training_workload({{"generator", "erdos_renyi"}, {"num_nodes", 30}, {"num_edges", 110}, {"num_relations", 3}}, 5,
                         json::array({{{"layer", "rgcn"}, {"name", "r1"}, {"out", 6}, {"activation", "relu"}},
                                      {{"layer", "rgcn"}, {"name", "r2"}, {"out", 4}}}),
                         {{"task", "node"}, {"loss", "cross_entropy"}, {"optimizer", {{"kind", "adam"}, {"lr", 0.01}, {"weight_decay", 5e-4}}}})}};
  std::vector<std::pair<std::string, workloads::Instance>> out;
  for (const auto& [name, doc] : docs) out.emplace_back(name, workloads::instantiate(workloads::parse_workload(doc, name + ".json")));
  return out;
}

// Every op of the step through the reference from the step's inputs alone (no backend involved).
TensorValues reference_step(const workloads::Instance& s) {
  TensorValues values = s.values;
  for (const Op& op : s.graph.ops) values.set_f32(op.output, reference::compute(op, values));
  return values;
}

// Largest |a - b| over the largest |b|: how far a tensor is from another, on the scale of its values.
double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double largest = 0, worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    largest = std::max(largest, static_cast<double>(std::fabs(b[i])));
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
  }
  return largest > 0 ? worst / largest : worst;
}

RunOptions once() {
  RunOptions o;
  o.warmup = 0;
  o.repeats = 1;
  return o;
}

}  // namespace

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

TEST_CASE("torch-cpu casts between every pair of value dtypes, scaled or not, as the reference does", "[torch][mixed_precision][unit]") {
  const DType dtypes[] = {DType::float32, DType::float16, DType::bfloat16};
  std::mt19937 rng(4);
  for (const DType from : dtypes)
    for (const DType to : dtypes)
      for (const float scale : {1.0f, 1024.0f, 0x1p-10f}) {
        INFO(to_string(from) << " -> " << to_string(to) << " x " << scale);
        OpGraph graph;
        std::vector<float> x = random_values(3000, rng, -70.0f, 70.0f);
        for (float& v : x) v = round_to(from, v * 1e-3f);
        const TensorId in = graph.add_tensor({"x", {300, 10}, from});
        Op op;
        op.name = "cast";
        op.kind = OpKind::cast;
        op.dtype = to;
        op.input = in;
        op.scalar = scale;
        op.shape = {300, 10, 0};
        graph.add_op(op);
        TensorValues inputs;
        inputs.set_f32(in, x, from);
        auto backend = peer::make_backend();
        const BackendResult r = backend->run(graph, inputs, once());
        INFO(r.ops.at(0).verification);
        CHECK(r.ops.at(0).verified == true);  // exactly the float32 product rounded once
      }
}

TEST_CASE("torch-cpu trains a bfloat16 model in mixed precision, verified, and refuses float16 (no CPU mm in this libtorch) as bad input",
          "[torch][mixed_precision][training][unit]") {
  for (const auto& [name, s32] : training_cases()) {
    if (name != "gcn" && name != "molecules") continue;
    INFO(name);
    // Whether libtorch keeps this host's bfloat16 partial sums in bfloat16 or float32, the forward
    // check follows what the backend's probe found (kernels/torch/accumulation_probe.hpp).
    json doc = training_workload({{"generator", "erdos_renyi"}, {"num_nodes", 200}, {"num_edges", 800}}, 24,
                                 json::array({{{"layer", "gcn"}, {"name", "c1"}, {"out", 16}, {"activation", "relu"}},
                                              {{"layer", "gcn"}, {"name", "c2"}, {"out", 4}}}),
                                 {{"task", "node"}, {"loss", "cross_entropy"}, {"train_fraction", 0.5},
                                  {"optimizer", {{"kind", "adam"}, {"lr", 0.01}, {"weight_decay", 5e-4}}}, {"loss_scale", 256}});
    if (name == "molecules")
      doc = training_workload({{"generator", "molecules"}, {"num_graphs", 24}, {"min_nodes", 8}, {"max_nodes", 10}}, 16,
                              json::array({{{"layer", "schnet"}, {"name", "i1"}, {"filters", 16}, {"num_gaussians", 20}, {"cutoff", 4.0}},
                                           {{"layer", "gin"}, {"name", "g2"}, {"out", 8}}}),
                              {{"task", "graph"}, {"loss", "mse"}, {"pool", "mean"}, {"optimizer", {{"kind", "sgd"}, {"lr", 0.05}, {"momentum", 0.9}}}});
    doc["dtype"] = "bfloat16";
    const workloads::Instance s = workloads::instantiate(workloads::parse_workload(doc, "h.json"));
    auto torch_backend = peer::make_backend();
    const BackendResult result = torch_backend->run(s.graph, s.values, once());
    REQUIRE(result.ops.size() == 4);
    // The gradients are held to 32 u where libtorch adds bfloat16 products in float32, and compared
    // but not checked where it keeps the partial sums in bfloat16 (training_checks.hpp).
    const bool in_dtype = peer::host_accumulation().accumulation.bfloat16 == reference::DotAccumulation::in_dtype;
    for (const OpResult& row : result.ops) {
      INFO(row.op << ": " << row.verification);
      if (row.phase == OpPhase::backward && in_dtype) CHECK_FALSE(row.verified.has_value());
      else CHECK(row.verified == true);
    }
    CHECK_THAT(result.ops[1].verification, Catch::Contains("the input's cast, the loss"));
    CHECK_THAT(result.ops[2].verification, Catch::Contains(in_dtype ? "not checked" : "32 u(bfloat16)"));
    // The loss beside the cpu backend's (each rounds its own half forward pass).
    cpu::CpuBackend cpu_backend;
    cpu_backend.run(s.graph, s.values, once());
    const double ours = cpu_backend.outputs().f32(s.training.loss).at(0), theirs = torch_backend->computed_outputs()->f32(s.training.loss).at(0);
    CHECK(std::fabs(ours - theirs) <= 8 * unit_roundoff(DType::bfloat16) * std::max(1.0, std::fabs(ours)));
    // Each update is float32 (the master weights) and moved the parameter.
    for (const auto& slot : s.training.parameters) {
      CHECK(torch_backend->computed_outputs()->dtype(slot.update) == DType::float32);
      const std::size_t p = s.values.f32(slot.param).size();
      const std::vector<float>& update = torch_backend->computed_outputs()->f32(slot.update);
      CHECK(std::vector<float>(update.begin(), update.begin() + static_cast<std::ptrdiff_t>(p)) != s.values.f32(slot.param));
    }
    if (name != "gcn") continue;
    doc["dtype"] = "float16";
    const workloads::Instance h = workloads::instantiate(workloads::parse_workload(doc, "h.json"));
    try {
      peer::make_backend()->run(h.graph, h.values, once());
      FAIL("a float16 training step ran on a libtorch without a float16 CPU mm");
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Catch::Contains("backend torch-cpu: op 'c1.lin' (matmul, a float16 training step): libtorch") &&
                               Catch::Contains("has no float16 CPU kernel"));
    }
  }
}

TEST_CASE("torch-cpu's accumulation probe tells float32 accumulators from partial sums in the dtype", "[torch][half][unit]") {
  // The classification alone, on made-up outputs: the exact values rounded once are float32
  // accumulation; values summed in the dtype step by step are not.
  for (const DType dtype : {DType::float16, DType::bfloat16}) {
    INFO(to_string(dtype));
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<double> exact;
    std::vector<float> once, stepwise;
    for (int out = 0; out < 512; ++out) {
      double e = 0;
      float s = 0;
      for (int p = 0; p < 128; ++p) {
        const float a = round_to(dtype, d(rng)), b = round_to(dtype, d(rng));
        e += static_cast<double>(a) * b;
        s = round_to(dtype, s + a * b);
      }
      exact.push_back(e);
      once.push_back(round_to(dtype, static_cast<float>(e)));
      stepwise.push_back(s);
    }
    const peer::ProbeOutcome f32 = peer::classify_accumulation(dtype, exact, once, "a test");
    CHECK(f32.accumulation == reference::DotAccumulation::float32);
    CHECK(f32.differing == 0);
    CHECK_THAT(f32.detail, Catch::Contains("float32 accumulators") && Catch::Contains("0 of 512 outputs"));
    const peer::ProbeOutcome in_dtype = peer::classify_accumulation(dtype, exact, stepwise, "a test");
    CHECK(in_dtype.accumulation == reference::DotAccumulation::in_dtype);
    CHECK(in_dtype.differing > 512 / 10);
    CHECK_THAT(in_dtype.detail, Catch::Contains("partial sums in " + to_string(dtype)));
  }
  // This host's libtorch: bfloat16 mm runs (one way or the other), float16 mm does not in 1.13.
  const peer::HostAccumulation& host = peer::host_accumulation();
  INFO(host.bfloat16.detail);
  CHECK(host.bfloat16.ran);
  CHECK(host.bfloat16.outputs == 2 * 64 * 64);
  CHECK(host.accumulation.bfloat16 == host.bfloat16.accumulation);
  INFO(host.float16.detail);
  if (!host.float16.ran) CHECK_THAT(host.float16.detail, Catch::Contains("not probed") && Catch::Contains("float16"));
}

TEST_CASE("torch-cpu's bfloat16 matmuls verify under the probed accumulation, say it, and agree with the cpu backend",
          "[torch][half][backend][unit]") {
  tilesim_test::OpCase c = tilesim_test::matmul_case(200, 300, 16, true, 21);
  tilesim_test::convert_to_dtype(c.graph, c.values, DType::bfloat16);
  auto torch_backend = peer::make_backend();
  const BackendResult result = torch_backend->run(c.graph, c.values, once());
  REQUIRE(result.ops.size() == 1);
  INFO(result.ops[0].verification);
  CHECK(result.ops[0].verified == true);
  const nlohmann::json& probe = result.host.at("half_matmul_accumulation").at("bfloat16");
  const bool in_dtype = torch_backend->accumulation().bfloat16 == reference::DotAccumulation::in_dtype;
  CHECK(probe.at("partial_sums_in") == (in_dtype ? "bfloat16" : "float32"));
  CHECK_THAT(probe.at("probe").get<std::string>(), Catch::Contains("at::mm_out and at::addmm_out"));
  if (in_dtype) CHECK_THAT(result.ops[0].verification, Catch::Contains("partial sums in bfloat16"));
  cpu::CpuBackend cpu_backend;
  cpu_backend.run(c.graph, c.values, once());
  const Op& op = c.op();
  const reference::Agreement agreement = reference::compare_outputs(op, c.values, cpu_backend.outputs().f32(op.output),
                                                                    torch_backend->computed_outputs()->f32(op.output),
                                                                    cpu_backend.accumulation(), torch_backend->accumulation());
  INFO(agreement.detail);
  CHECK(agreement.equal);
}
