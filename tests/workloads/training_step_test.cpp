// A training step lowered from a workload's "train" section (workloads/training/training_step): the
// section's parsing and errors, the step's shape (phases in order, one update per parameter), its
// gradients through the readouts (a training mask, a mean pool, GAT's block-diagonal attention) against
// finite differences of the loss, and several steps on the CPU kernels against the same steps through the
// reference.
#include <algorithm>
#include <cmath>
#include <numeric>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "ir/reference/reference.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/workload.hpp"
#include "workloads/layers/layers.hpp"

using namespace tilesim;
using namespace tilesim::workloads;
using json = nlohmann::json;
using Catch::Matchers::Contains;

namespace {

using tilesim_test::required_input_error_of;

json step_workload(json train, json model = nullptr) {
  if (model.is_null())
    model = json::array({{{"layer", "gcn"}, {"name", "conv1"}, {"out", 6}, {"activation", "relu"}},
                         {{"layer", "gcn"}, {"name", "conv2"}, {"out", 3}}});
  return {{"name", "t"},
          {"seed", 5},
          {"graph", {{"generator", "erdos_renyi"}, {"num_nodes", 24}, {"num_edges", 80}}},
          {"num_features", 5},
          {"model", model},
          {"train", train}};
}

json graph_workload(json train, json model) {
  return {{"name", "t"},
          {"seed", 2},
          {"graph", {{"generator", "molecules"}, {"num_graphs", 3}, {"min_nodes", 3}, {"max_nodes", 5}}},
          {"num_features", 4},
          {"model", model},
          {"train", train}};
}

json adam_step(double lr = 0.01) { return {{"kind", "adam"}, {"lr", lr}}; }

std::string step_error_of(const json& doc) {
  return required_input_error_of([&] { instantiate(parse_workload(doc, "w.json")); });
}

// The reference's value of every op of the step, in order, into `values`; returns the loss.
double evaluate(const Instance& s, TensorValues& values, bool forward_only) {
  double loss = 0;
  for (const Op& op : s.graph.ops) {
    if (forward_only && op.phase != OpPhase::forward && op.kind != OpKind::loss) break;
    if (op.output == s.training.loss) loss = reference::expect(op, resolve_operands(op, values)).value.at(0);
    values.set_f32(op.output, reference::compute(op, values));
  }
  return loss;
}

// Each parameter's largest gradient entries against central differences of the loss; returns how many.
int check_gradients(const Instance& s) {
  TensorValues values = s.values;
  evaluate(s, values, false);
  int checked = 0;
  for (const auto& slot : s.training.parameters) {
    const std::vector<float>& grad = values.f32(slot.grad);
    std::vector<std::size_t> order(grad.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return std::fabs(grad[a]) > std::fabs(grad[b]); });
    for (std::size_t r = 0; r < std::min<std::size_t>(2, order.size()); ++r) {
      const std::size_t i = order[r];
      const float p0 = s.values.f32(slot.param)[i], h = 1.0f / 256;
      TensorValues up = s.values, down = s.values;
      up.mutable_f32(slot.param)[i] = p0 + h;
      down.mutable_f32(slot.param)[i] = p0 - h;
      const double fd = (evaluate(s, up, true) - evaluate(s, down, true)) / (static_cast<double>(p0 + h) - (p0 - h));
      INFO(s.graph.tensor(slot.param).name << "[" << i << "]: backward " << grad[i] << ", finite difference " << fd);
      CHECK(std::fabs(fd - grad[i]) <= 2e-3 + 0.03 * std::fabs(fd));
      ++checked;
    }
  }
  return checked;
}

}  // namespace

TEST_CASE("train: defaults are PyTorch's and the echo is valid input", "[training][workload][unit]") {
  const Workload w = parse_workload(step_workload({{"task", "node"}, {"loss", "cross_entropy"}, {"optimizer", {{"kind", "adam"}}}}), "w.json");
  REQUIRE(w.model->train);
  const auto& t = *w.model->train;
  CHECK(t.train_fraction == 1);
  CHECK(t.steps == 1);
  CHECK_FALSE(t.recompute);
  CHECK(t.optimizer.lr == 1e-3);
  CHECK(t.optimizer.beta1 == 0.9);
  CHECK(t.optimizer.beta2 == 0.999);
  CHECK(t.optimizer.eps == 1e-8);
  json echo = to_json(w);
  echo.erase("source_file");
  CHECK(echo["train"]["optimizer"]["betas"] == json::array({0.9, 0.999}));
  const Workload again = parse_workload(echo, "echo.json");
  json again_echo = to_json(again);
  again_echo.erase("source_file");
  CHECK(again_echo == echo);
  const Workload sgd = parse_workload(
      graph_workload({{"task", "graph"}, {"loss", "mse"}, {"optimizer", {{"kind", "sgd"}, {"momentum", 0.9}}}, {"steps", 4}},
                     json::array({{{"layer", "gin"}, {"name", "g"}, {"out", 2}}})),
      "w.json");
  CHECK(sgd.model->train->pool == training::TrainSpec::Pool::add);
  CHECK(sgd.model->train->optimizer.momentum == 0.9);
  CHECK(sgd.model->train->steps == 4);
}

TEST_CASE("train: bad sections name the path, what was expected and what was found", "[training][workload][unit]") {
  const json opt = adam_step();
  CHECK_THAT(step_error_of(step_workload({{"task", "node"}, {"loss", "cross_entropy"}, {"optimizer", opt}, {"stpes", 2}})),
             Contains("stpes"));
  CHECK_THAT(step_error_of(step_workload({{"task", "edge"}, {"loss", "cross_entropy"}, {"optimizer", opt}})), Contains("train.task"));
  CHECK_THAT(step_error_of(step_workload({{"task", "node"}, {"loss", "nll"}, {"optimizer", opt}})), Contains("train.loss"));
  CHECK_THAT(step_error_of(step_workload({{"task", "node"}, {"loss", "mse"}})), Contains("train.optimizer"));
  CHECK_THAT(step_error_of(step_workload({{"task", "node"}, {"loss", "mse"}, {"optimizer", {{"kind", "sgd"}, {"betas", {0.9, 0.99}}}}})),
             Contains("train.optimizer") && Contains("betas"));
  CHECK_THAT(step_error_of(step_workload({{"task", "node"}, {"loss", "mse"}, {"optimizer", {{"kind", "adam"}, {"betas", {0.9, 1.0}}}}})),
             Contains("train.optimizer.betas[1]"));
  CHECK_THAT(step_error_of(step_workload({{"task", "node"}, {"loss", "mse"}, {"optimizer", {{"kind", "adam"}, {"lr", -1}}}})),
             Contains("train.optimizer.lr"));
  CHECK_THAT(step_error_of(step_workload({{"task", "node"}, {"loss", "mse"}, {"optimizer", opt}, {"train_fraction", 0}})),
             Contains("train.train_fraction"));
  CHECK_THAT(step_error_of(step_workload({{"task", "node"}, {"loss", "mse"}, {"optimizer", opt}, {"pool", "add"}})),
             Contains("train.pool") && Contains("node task"));
  CHECK_THAT(step_error_of(step_workload({{"task", "node"}, {"loss", "mse"}, {"optimizer", opt}, {"steps", 0}})),
             Contains("train.steps"));
  // A graph task needs a batch of graphs; a single graph has no batch vector.
  CHECK_THAT(step_error_of(step_workload({{"task", "graph"}, {"loss", "mse"}, {"optimizer", opt}})),
             Contains("train.task") && Contains("single graph"));
  json no_model = {{"name", "t"}, {"ops", json::array({{{"op", "gather"}, {"num_inputs", 4}, {"num_features", 2}, {"num_outputs", 3}}})},
                   {"train", {{"task", "node"}, {"loss", "mse"}, {"optimizer", opt}}}};
  CHECK_THAT(step_error_of(no_model), Contains("\"train\"") && Contains("model"));
}

TEST_CASE("train: the step runs forward, loss, backward, optimizer, with one update per parameter", "[training][workload][unit]") {
  const Instance s = instantiate(parse_workload(
      step_workload({{"task", "node"}, {"loss", "cross_entropy"}, {"train_fraction", 0.5}, {"optimizer", adam_step()}}), "w.json"));
  REQUIRE(s.training.active());
  int phase = 0;
  for (const Op& op : s.graph.ops) {
    INFO(op.name);
    CHECK(static_cast<int>(op.phase) >= phase);  // phases never go back
    phase = static_cast<int>(op.phase);
  }
  CHECK(s.graph.ops.back().phase == OpPhase::optimizer);
  // GCN: a weight and a bias per layer, each with Adam's two state rows, and the step number.
  REQUIRE(s.training.parameters.size() == 4);
  REQUIRE(s.training.step >= 0);
  CHECK(s.values.f32(s.training.step) == std::vector<float>{1.0f});
  for (const auto& slot : s.training.parameters) {
    CHECK(s.graph.tensor(slot.state).shape.at(0) == 2);
    CHECK(s.graph.tensor(slot.update).elements() == 3 * s.graph.tensor(slot.param).elements());
  }
  // The mask keeps 12 of the 24 nodes: the loss is over 12 rows.
  const Op& loss = *std::find_if(s.graph.ops.begin(), s.graph.ops.end(), [](const Op& op) { return op.kind == OpKind::loss; });
  CHECK(loss.shape.num_inputs == 12);
  std::vector<std::string> groups;
  for (const OpGroup& g : s.graph.groups) groups.push_back(g.name);
  CHECK(groups == std::vector<std::string>{"conv1", "conv2", "readout", "loss", "readout.grad", "conv2.grad", "conv1.grad", "optimizer"});
}

TEST_CASE("train: gradients through a training mask, a mean pool and multi-head attention equal finite differences",
          "[training][workload][unit]") {
  SECTION("node task, half the nodes in the mask") {
    const Instance s = instantiate(parse_workload(
        step_workload({{"task", "node"}, {"loss", "cross_entropy"}, {"train_fraction", 0.5}, {"optimizer", adam_step()}}), "w.json"));
    CHECK(check_gradients(s) == 8);
  }
  SECTION("graph task, mean pool, cross entropy over graph classes") {
    const Instance s = instantiate(parse_workload(
        graph_workload({{"task", "graph"}, {"loss", "cross_entropy"}, {"pool", "mean"}, {"optimizer", adam_step()}},
                       json::array({{{"layer", "gin"}, {"name", "g1"}, {"out", 5}, {"activation", "relu"}},
                                    {{"layer", "sage"}, {"name", "s2"}, {"out", 3}}})),
        "w.json"));
    CHECK(check_gradients(s) >= 8);
  }
  SECTION("GAT with two heads: the attention matrix's gradient and update stay on its diagonal blocks") {
    const Instance s = instantiate(parse_workload(
        step_workload({{"task", "node"}, {"loss", "mse"}, {"optimizer", adam_step(0.1)}},
                      json::array({{{"layer", "gat"}, {"name", "a1"}, {"out", 3}, {"heads", 2}, {"activation", "relu"}},
                                   {{"layer", "gat"}, {"name", "a2"}, {"out", 2}}})),
        "w.json"));
    CHECK(check_gradients(s) >= 8);
    TensorValues values = s.values;
    evaluate(s, values, false);
    int blocks = 0;
    for (const auto& slot : s.training.parameters) {
      const TensorInfo& info = s.graph.tensor(slot.param);
      if (info.name.find("att_") == std::string::npos) continue;
      ++blocks;
      const std::vector<float>& before = s.values.f32(slot.param);
      const std::vector<float>& after = values.f32(slot.update);
      bool moved = false;
      const std::int64_t heads = info.shape.at(1), channels = info.shape.at(0) / heads;
      for (std::int64_t r = 0; r < info.shape.at(0); ++r)
        for (std::int64_t h = 0; h < heads; ++h) {
          const std::size_t i = static_cast<std::size_t>(r * heads + h);
          if (r / channels != h) CHECK(after[i] == 0.0f);  // off the blocks: zero before and after
          else moved = moved || after[i] != before[i];
        }
      CHECK(moved);
    }
    CHECK(blocks == 4);  // att_src and att_dst of both layers (a2's single head is all one block)
  }
}

TEST_CASE("train: GAT's per-edge attention gives the per-node attention's loss and updates, computed over the edges",
          "[training][workload][unit]") {
  auto gat_step = [](const char* attention) {
    return instantiate(parse_workload(
        step_workload({{"task", "node"}, {"loss", "mse"}, {"optimizer", adam_step(0.1)}},
                      json::array({{{"layer", "gat"}, {"name", "a1"}, {"out", 3}, {"heads", 2}, {"activation", "relu"}, {"attention", attention}},
                                   {{"layer", "gat"}, {"name", "a2"}, {"out", 2}, {"attention", attention}}})),
        "w.json"));
  };
  const Instance node = gat_step("per_node"), edge = gat_step("per_edge");
  auto rows_of = [](const Instance& s, const std::string& op) -> std::int64_t {
    for (const Op& o : s.graph.ops)
      if (o.name == op) return s.graph.tensor(o.output).shape.at(0);
    return -1;
  };
  // Per node: the logits on the 24 nodes' rows, then gathered. Per edge: both endpoints' rows gathered
  // (80 edges and 24 self loops at most), each times its attention vector.
  CHECK(rows_of(node, "a1.alpha_src") == 24);
  CHECK(rows_of(node, "a1.gather_dst") == -1);
  const std::int64_t edges = rows_of(edge, "a1.gather_src");
  CHECK(edges > 24);
  CHECK(rows_of(edge, "a1.gather_dst") == edges);
  CHECK(rows_of(edge, "a1.alpha_j") == edges);
  CHECK(rows_of(edge, "a1.alpha_src") == -1);
  CHECK(edge.graph.groups.front().kind == "gat_per_edge");
  CHECK(check_gradients(edge) >= 8);
  // The same parameters (drawn by name), so the same loss and the same Adam step.
  TensorValues node_values = node.values, edge_values = edge.values;
  evaluate(node, node_values, false);
  evaluate(edge, edge_values, false);
  CHECK(edge_values.f32(edge.training.loss)[0] == Approx(node_values.f32(node.training.loss)[0]).epsilon(1e-5));
  REQUIRE(edge.training.parameters.size() == node.training.parameters.size());
  for (std::size_t k = 0; k < node.training.parameters.size(); ++k) {
    const auto& a = node.training.parameters[k];
    const auto& b = edge.training.parameters[k];
    INFO(node.graph.tensor(a.param).name);
    REQUIRE(edge.graph.tensor(b.param).name == node.graph.tensor(a.param).name);
    const std::vector<float>& x = node_values.f32(a.update);
    const std::vector<float>& y = edge_values.f32(b.update);
    REQUIRE(x.size() == y.size());
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(y[i] == Approx(x[i]).margin(1e-5));
  }
}

TEST_CASE("train: GAT with concat false averages its heads: the mean of the concatenated heads, trained through", "[training][workload][unit]") {
  auto gat = [](bool concat) {
    json layer = {{"layer", "gat"}, {"name", "a1"}, {"out", 3}, {"heads", 4}, {"bias", false}, {"concat", concat}};
    return parse_workload(step_workload({{"task", "node"}, {"loss", "mse"}, {"optimizer", adam_step(0.1)}}, json::array({layer})), "w.json");
  };
  const Instance averaged = instantiate(gat(false)), concatenated = instantiate(gat(true));
  CHECK(check_gradients(averaged) >= 4);
  // Forward values: each averaged row is the mean of its 4 concatenated heads' rows.
  auto output_of = [](const Instance& s) {
    TensorValues values = s.values;
    evaluate(s, values, false);
    for (const Op& op : s.graph.ops)
      if (op.name == "a1.aggregate") return std::make_pair(values, op.output);
    return std::make_pair(values, TensorId{-1});
  };
  const auto [cat_values, cat_out] = output_of(concatenated);
  TensorValues avg_values = averaged.values;
  evaluate(averaged, avg_values, false);
  TensorId mean_out = -1;
  for (const Op& op : averaged.graph.ops)
    if (op.name == "a1.head_mean") mean_out = op.output;
  REQUIRE(cat_out >= 0);
  REQUIRE(mean_out >= 0);
  const std::vector<float>& cat = cat_values.f32(cat_out);
  const std::vector<float>& avg = avg_values.f32(mean_out);
  REQUIRE(avg.size() * 4 == cat.size());
  for (std::size_t row = 0; row < avg.size() / 3; ++row)
    for (std::size_t c = 0; c < 3; ++c) {
      float sum = 0;
      for (std::size_t h = 0; h < 4; ++h) sum += cat[row * 12 + h * 3 + c];
      CHECK(avg[row * 3 + c] == Approx(sum / 4).margin(1e-6));
    }
  // The averaging matrix is a constant: not among the trained parameters.
  for (const auto& slot : averaged.training.parameters) CHECK(averaged.graph.tensor(slot.param).name != "a1.head_mean");
}

TEST_CASE("train: a model that pools its own rows, then a readout MLP on the graph rows, trains as a graph task",
          "[training][workload][unit]") {
  const json model = json::array({{{"layer", "gin"}, {"name", "g1"}, {"out", 5}, {"activation", "relu"}},
                                  {{"layer", "pool"}, {"name", "readout_pool"}, {"reduce", "mean"}},
                                  {{"layer", "linear"}, {"name", "fc1"}, {"out", 6}, {"activation", "relu"}},
                                  {{"layer", "linear"}, {"name", "fc2"}, {"out", 3}}});
  json doc = graph_workload({{"task", "graph"}, {"loss", "cross_entropy"}, {"optimizer", adam_step()}}, model);
  const Instance s = instantiate(parse_workload(doc, "w.json"));
  // The model's pool makes the graph rows (3 molecules); the MLP runs on them and the loss reads them as
  // they are: no second pool in the readout.
  std::int64_t pools = 0, fc1_rows = -1;
  for (const Op& op : s.graph.ops) {
    if (op.name == "readout_pool.pool") {
      ++pools;
      CHECK(op.kind == OpKind::scatter_mean);
    }
    if (op.name.rfind("readout.pool", 0) == 0) ++pools;
    if (op.name == "fc1.lin") fc1_rows = s.graph.tensor(op.output).shape.at(0);
  }
  CHECK(pools == 1);
  CHECK(fc1_rows == 3);
  CHECK(check_gradients(s) >= 8);
  // The echo leaves out train.pool (the model pools) and is itself valid input.
  json echo = to_json(parse_workload(doc, "w.json"));
  CHECK_FALSE(echo["train"].contains("pool"));
  CHECK(echo["model"][1] == json({{"layer", "pool"}, {"name", "readout_pool"}, {"reduce", "mean"}, {"activation", "none"}}));
  echo.erase("source_file");
  CHECK_NOTHROW(instantiate(parse_workload(echo, "echo.json")));
  // The same model pooled by the train section's readout instead: the same graph rows, one pool.
  json plain = graph_workload({{"task", "graph"}, {"loss", "cross_entropy"}, {"pool", "mean"}, {"optimizer", adam_step()}},
                              json::array({model[0]}));
  const Instance p = instantiate(parse_workload(plain, "w.json"));
  TensorValues pooled_values = s.values, plain_values = p.values;
  evaluate(s, pooled_values, false);
  evaluate(p, plain_values, false);
  CHECK(std::isfinite(pooled_values.f32(s.training.loss)[0]));
  CHECK(std::isfinite(plain_values.f32(p.training.loss)[0]));
}

TEST_CASE("train: steps on the CPU kernels follow the reference's steps, and plain SGD lowers the loss",
          "[training][workload][kernels][unit]") {
  const Instance s = instantiate(parse_workload(
      graph_workload({{"task", "graph"}, {"loss", "mse"}, {"optimizer", {{"kind", "sgd"}, {"lr", 0.01}, {"momentum", 0.5}}}},
                     json::array({{{"layer", "schnet"}, {"name", "i1"}, {"filters", 4}, {"num_gaussians", 6}, {"cutoff", 4.0}},
                                  {{"layer", "gcn"}, {"name", "c2"}, {"out", 2}}})),
      "w.json"));
  kernels::cpu::CpuBackend cpu;
  RunOptions options;
  options.warmup = 0;
  options.repeats = 1;
  TensorValues cpu_values = s.values, ref_values = s.values;
  std::vector<double> cpu_loss, ref_loss;
  for (int step = 0; step < 4; ++step) {
    const BackendResult r = cpu.run(s.graph, cpu_values, options);
    for (const OpResult& row : r.ops) {
      INFO("step " << step << " op " << row.op << ": " << row.verification);
      CHECK(row.verified.value_or(false));
    }
    cpu_loss.push_back(cpu.outputs().f32(s.training.loss)[0]);
    training::advance_step(s.training, cpu.outputs(), cpu_values);
    TensorValues outputs = ref_values;
    ref_loss.push_back(evaluate(s, outputs, false));
    training::advance_step(s.training, outputs, ref_values);
  }
  for (std::size_t k = 0; k < cpu_loss.size(); ++k) {
    INFO("step " << k + 1);
    CHECK(cpu_loss[k] == Approx(ref_loss[k]).epsilon(1e-5));
  }
  CHECK(cpu_loss.back() < cpu_loss.front());
}

TEST_CASE("train: transposed matmuls on the CPU equal the reference", "[training][kernels][unit]") {
  // Odd sizes so that a swapped leading dimension cannot pass.
  for (int variant = 0; variant < 2; ++variant) {
    OpGraph g;
    const std::int64_t m = 7, k = 5, n = 3;
    const TensorId a = g.add_tensor({"a", variant == 0 ? std::vector<std::int64_t>{k, m} : std::vector<std::int64_t>{m, k}});
    const TensorId b = g.add_tensor({"b", variant == 0 ? std::vector<std::int64_t>{k, n} : std::vector<std::int64_t>{n, k}});
    Op op;
    op.name = "mm";
    op.kind = OpKind::matmul;
    op.input = a;
    op.weight = b;
    op.transpose_input = variant == 0;
    op.transpose_weight = variant == 1;
    op.shape.num_inputs = m;
    op.shape.num_features = k;
    op.shape.out_features = n;
    g.add_op(op);
    TensorValues v;
    std::vector<float> av(static_cast<std::size_t>(m * k)), bv(static_cast<std::size_t>(k * n));
    for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>((i * 37) % 11) - 5.0f;
    for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>((i * 13) % 7) - 3.0f;
    v.set_f32(a, av);
    v.set_f32(b, bv);
    kernels::cpu::CpuBackend cpu;
    const BackendResult r = cpu.run(g, v, RunOptions{});
    INFO(r.ops.at(0).verification);
    CHECK(r.ops.at(0).verified.value_or(false));
    CHECK(cpu.outputs().f32(g.ops[0].output) == reference::compute(g.ops[0], v));
  }
}

TEST_CASE("train: segment_matmul's backward forms on the CPU equal the reference", "[training][kernels][unit]") {
  // A 40-row segment (one SGEMM), an empty one and a 5-row one (the row loop); odd sizes throughout.
  const std::vector<std::int32_t> offsets{0, 40, 40, 45};
  const std::int64_t m = 45, k = 5, n = 3, segs = 3;
  for (int variant = 0; variant < 2; ++variant) {
    const bool weight_grad = variant == 1;
    OpGraph g;
    // input's gradient: input [m, n] (the output's gradient), weight [segs, k, n] read transposed, out [m, k];
    // weight's gradient: input [m, k], weight [m, n] (the gradient), out [segs * k, n].
    const TensorId a = g.add_tensor({"a", {m, weight_grad ? k : n}});
    const TensorId off = g.add_tensor({"offsets", {segs + 1}, DType::int32});
    const TensorId b = g.add_tensor({"b", weight_grad ? std::vector<std::int64_t>{m, n} : std::vector<std::int64_t>{segs, k, n}});
    const Op op = weight_grad ? workloads::layers::segment_matmul_weight_grad("mm.grad.weight", g, a, off, b)
                              : workloads::layers::segment_matmul_input_grad("mm.grad.input", g, a, off, b);
    g.add_op(op);
    TensorValues v;
    std::vector<float> av(static_cast<std::size_t>(g.tensor(a).elements())), bv(static_cast<std::size_t>(g.tensor(b).elements()));
    for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>((i * 37) % 11) - 5.0f;
    for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>((i * 13) % 7) - 3.0f;
    v.set_f32(a, av);
    v.set_i32(off, offsets);
    v.set_f32(b, bv);
    kernels::cpu::CpuBackend cpu;
    const BackendResult r = cpu.run(g, v, RunOptions{});
    INFO(op.name << ": " << r.ops.at(0).verification);
    CHECK(r.ops.at(0).verified.value_or(false));
    const std::vector<float>& got = cpu.outputs().f32(g.ops[0].output);
    CHECK(got == reference::compute(g.ops[0], v));  // small integers: every order of sums is exact
    if (weight_grad)
      for (std::int64_t i = k * n; i < 2 * k * n; ++i) CHECK(got[static_cast<std::size_t>(i)] == 0.0f);
  }
}
