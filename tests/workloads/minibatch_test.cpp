// Mini-batch workloads (workloads/loaders/): the "loader" section's parsing and errors, its echo, the
// batch source's determinism and keyed features, and padding's neutrality: a batch padded to a fixed
// shape computes, on the CPU kernels, the loss and parameter updates of the same batch in its exact shape.
#include <algorithm>
#include <cmath>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/loaders/batch_lowering.hpp"
#include "workloads/loaders/batch_source.hpp"
#include "workloads/workload.hpp"

using namespace tilesim;
using namespace tilesim::workloads;
using json = nlohmann::json;
using Catch::Matchers::Contains;
using tilesim_test::required_input_error_of;

namespace {

json sage_model(int classes = 3) {
  return json::array({{{"layer", "sage"}, {"name", "conv1"}, {"out", 8}, {"activation", "relu"}},
                      {{"layer", "sage"}, {"name", "conv2"}, {"out", classes}}});
}

json node_train() {
  return {{"task", "node"}, {"loss", "cross_entropy"}, {"train_fraction", 0.5}, {"optimizer", {{"kind", "adam"}, {"lr", 0.01}}}};
}

json node_workload(json loader, json model = sage_model(), json train = node_train()) {
  json w = {{"name", "mb"},
            {"seed", 3},
            {"graph", {{"generator", "erdos_renyi"}, {"num_nodes", 300}, {"num_edges", 1500}}},
            {"num_features", 6},
            {"model", model},
            {"loader", loader}};
  if (!train.is_null()) w["train"] = train;
  return w;
}

json graphs_workload(json loader, json train = nullptr) {
  if (train.is_null()) train = {{"task", "graph"}, {"loss", "mse"}, {"pool", "add"}, {"optimizer", {{"kind", "adam"}, {"lr", 0.01}}}};
  return {{"name", "mbg"},
          {"seed", 4},
          {"model", json::array({{{"layer", "gin"}, {"name", "g1"}, {"out", 8}, {"activation", "relu"}},
                                 {{"layer", "gin"}, {"name", "g2"}, {"out", 2}}})},
          {"train", train},
          {"loader", loader}};
}

json qm9_loader() {
  return {{"kind", "graphs"}, {"dataset", {{"kind", "qm9"}, {"num_graphs", 40}}}, {"batch_size", 6}};
}

std::string error_of(const json& doc) {
  return required_input_error_of([&] { parse_workload(doc, "w.json"); });
}

// A trained parameter, its optimizer state or Adam's step number: kept on the device between steps.
bool is_kept_on_device(const training::TrainingLayout& layout, TensorId t) {
  if (t == layout.step) return true;
  for (const auto& slot : layout.parameters)
    if (t == slot.param || t == slot.state) return true;
  return false;
}

// The loss and every updated parameter of one step of `instance` on the CPU kernels.
struct StepOutcome {
  double loss = 0;
  std::vector<std::vector<float>> updates;
  bool verified = true;
};
StepOutcome cpu_step(const Instance& instance) {
  kernels::cpu::CpuBackend cpu;
  RunOptions options;
  options.warmup = 0;
  options.repeats = 1;
  const BackendResult r = cpu.run(instance.graph, instance.values, options);
  StepOutcome out;
  for (const OpResult& row : r.ops) out.verified = out.verified && row.verified.value_or(false);
  out.loss = cpu.outputs().f32(instance.training.loss).at(0);
  for (const auto& slot : instance.training.parameters) out.updates.push_back(cpu.outputs().f32(slot.update));
  return out;
}

// Lowers batch k exact and padded (to the largest of the first `batches` batches) and checks that both
// steps compute the same loss and the same updates.
void check_padding_is_neutral(const Workload& w, std::int64_t batches) {
  const loaders::BatchSource source(w);
  std::vector<loaders::Batch> made;
  for (std::int64_t k = 0; k < batches; ++k) made.push_back(source.make(k));
  const loaders::PaddedShape shape = loaders::padded_shape(source, made);
  for (std::int64_t k = 0; k < batches; ++k) {
    INFO("batch " << k + 1);
    const auto exact = loaders::lower_batch(w, source, k, made[static_cast<std::size_t>(k)], std::nullopt);
    const auto padded = loaders::lower_batch(w, source, k, made[static_cast<std::size_t>(k)], shape);
    CHECK(padded.shape.padding.pad_nodes + exact.shape.nodes == shape.size.num_nodes);
    CHECK(padded.shape.padding.pad_edges + exact.shape.edges == shape.size.num_edges);
    CHECK(padded.shape.loss_rows == exact.shape.loss_rows);
    const StepOutcome a = cpu_step(exact.instance), b = cpu_step(padded.instance);
    CHECK(a.verified);
    CHECK(b.verified);
    CHECK(a.loss == Approx(b.loss).epsilon(1e-5));
    REQUIRE(a.updates.size() == b.updates.size());
    for (std::size_t p = 0; p < a.updates.size(); ++p) {
      REQUIRE(a.updates[p].size() == b.updates[p].size());
      // Sums over a padded batch run in other chunks (SIMD lanes, threads), so the two differ by rounding:
      // judged relative to the update's largest magnitude (its Adam state holds squared gradients).
      double worst = 0, magnitude = 1;
      for (std::size_t i = 0; i < a.updates[p].size(); ++i) {
        worst = std::max(worst, std::fabs(double(a.updates[p][i]) - b.updates[p][i]));
        magnitude = std::max(magnitude, std::fabs(double(a.updates[p][i])));
      }
      INFO("parameter " << p << ": largest difference " << worst << " of magnitude " << magnitude);
      CHECK(worst <= 1e-4 * magnitude);
    }
  }
}

}  // namespace

TEST_CASE("loader: each kind parses, with defaults, and its echo is valid input", "[loader][workload][unit]") {
  const Workload n = parse_workload(node_workload({{"kind", "neighbor"}, {"batch_size", 32}, {"fanouts", {5, -1}}}), "w.json");
  REQUIRE(n.model->loader);
  CHECK(n.model->loader->kind == loaders::LoaderSpec::Kind::neighbor);
  CHECK(n.model->loader->fanouts == std::vector<std::int64_t>{5, -1});
  CHECK(n.model->loader->shuffle);
  CHECK_FALSE(n.model->loader->replace);
  const Workload c = parse_workload(node_workload({{"kind", "cluster"}, {"num_parts", 10}, {"clusters_per_batch", 3}}), "w.json");
  CHECK(c.model->loader->num_parts == 10);
  CHECK(c.model->loader->clusters_per_batch == 3);
  const Workload g = parse_workload(graphs_workload(qm9_loader()), "w.json");
  CHECK(g.model->loader->dataset->kind == loaders::DatasetKind::qm9);
  CHECK(g.model->num_features == 11);  // QM9's node features
  CHECK(g.model->loader->packing == loaders::LoaderSpec::Packing::pad);
  for (const Workload* w : {&n, &c, &g}) {
    json echo = to_json(*w);
    echo.erase("source_file");
    CHECK(echo.contains("loader"));
    CHECK_FALSE(echo["train"].contains("steps"));
    json again = to_json(parse_workload(echo, "echo.json"));
    again.erase("source_file");
    CHECK(again == echo);
  }
}

TEST_CASE("loader: bad sections name the path, what was expected and what was found", "[loader][workload][unit]") {
  CHECK_THAT(error_of(node_workload({{"kind", "neighbour"}, {"batch_size", 8}})), Contains("loader.kind"));
  CHECK_THAT(error_of(node_workload({{"kind", "neighbor"}, {"batch_size", 8}, {"fanouts", {10, 0}}})), Contains("loader.fanouts[1]"));
  CHECK_THAT(error_of(node_workload({{"kind", "neighbor"}, {"batch_size", 8}, {"fanouts", json::array()}})), Contains("loader.fanouts"));
  // 2^64 - 1 must not wrap to -1 (every in-edge).
  CHECK_THAT(error_of(node_workload({{"kind", "neighbor"}, {"batch_size", 8}, {"fanouts", {10, 18446744073709551615ull}}})),
             Contains("loader.fanouts[1]") && Contains("18446744073709551615"));
  CHECK_THAT(error_of(node_workload({{"kind", "neighbor"}, {"fanouts", {10}}})), Contains("loader.batch_size"));
  CHECK_THAT(error_of(node_workload({{"kind", "neighbor"}, {"batch_size", 8}, {"fanouts", {10}}, {"num_parts", 3}})),
             Contains("loader.num_parts"));
  CHECK_THAT(error_of(node_workload({{"kind", "neighbor"}, {"batch_size", 8}, {"fanouts", {10}}, {"batchsize", 3}})),
             Contains("batchsize"));
  CHECK_THAT(error_of(node_workload({{"kind", "cluster"}, {"num_parts", 4}, {"clusters_per_batch", 5}})),
             Contains("loader.clusters_per_batch"));
  CHECK_THAT(error_of(node_workload({{"kind", "cluster"}, {"num_parts", 4}, {"fixed_size", {{"num_nodes", 9}, {"num_edges", 9}, {"num_graphs", 3}}}})),
             Contains("loader.fixed_size.num_graphs"));
  json packed = qm9_loader();
  packed["packing"] = "lpfhp";
  CHECK_THAT(error_of(graphs_workload(packed)), Contains("loader.batch_size"));
  packed.erase("batch_size");
  CHECK_THAT(error_of(graphs_workload(packed)), Contains("loader.fixed_size"));
  json small = qm9_loader();
  small["fixed_size"] = {{"num_nodes", 400}, {"num_edges", 9000}, {"num_graphs", 6}};
  CHECK_THAT(error_of(graphs_workload(small)), Contains("batch_size + 1"));
  json water = qm9_loader();
  water["dataset"] = {{"kind", "water"}};
  CHECK_THAT(error_of(graphs_workload(water)), Contains("loader.dataset.num_graphs"));
  // The dataset is the graph source; a graph beside it is refused, and so are steps beside a loader.
  json with_graph = graphs_workload(qm9_loader());
  with_graph["graph"] = {{"preset", "qm9"}};
  CHECK_THAT(error_of(with_graph), Contains("graph"));
  json with_steps = node_workload({{"kind", "neighbor"}, {"batch_size", 8}, {"fanouts", {3}}});
  with_steps["train"]["steps"] = 3;
  CHECK_THAT(error_of(with_steps), Contains("train.steps"));
  json node_task_on_graphs = graphs_workload(qm9_loader(), node_train());
  CHECK_THAT(error_of(node_task_on_graphs), Contains("train.task"));
  json with_ops = node_workload({{"kind", "neighbor"}, {"batch_size", 8}, {"fanouts", {3}}});
  with_ops["ops"] = json::array({{{"op", "gather"}, {"num_inputs", 4}, {"num_features", 2}, {"num_outputs", 3}}});
  CHECK_THAT(error_of(with_ops), Contains("ops"));
}

TEST_CASE("loader: a uniform dataset needs its size range and node features, echoes, and refuses other kinds' keys",
          "[loader][workload][unit]") {
  const json uniform = {{"kind", "graphs"},
                        {"dataset", {{"kind", "uniform"}, {"num_graphs", 30}, {"min_nodes", 2}, {"max_nodes", 9}}},
                        {"batch_size", 4}};
  // No feature width of its own: the workload gives one.
  CHECK_THAT(error_of(graphs_workload(uniform)), Contains("num_features"));
  json given = graphs_workload(uniform);
  given["num_features"] = 21;
  const Workload w = parse_workload(given, "w.json");
  REQUIRE(w.model->loader->dataset);
  CHECK(w.model->loader->dataset->kind == loaders::DatasetKind::uniform);
  CHECK(w.model->loader->dataset->min_nodes == 2);
  CHECK(w.model->loader->dataset->max_nodes == 9);
  json echo = to_json(w);
  echo.erase("source_file");
  CHECK(echo["loader"]["dataset"]["max_nodes"] == 9);
  json again = to_json(parse_workload(echo, "echo.json"));
  again.erase("source_file");
  CHECK(again == echo);
  for (const char* key : {"num_graphs", "min_nodes", "max_nodes"}) {
    json missing = given;
    missing["loader"]["dataset"].erase(key);
    CHECK_THAT(error_of(missing), Contains(std::string("loader.dataset.") + key));
  }
  json reversed = given;
  reversed["loader"]["dataset"]["min_nodes"] = 10;
  CHECK_THAT(error_of(reversed), Contains("loader.dataset.max_nodes") && Contains("at least min_nodes (10)"));
  json waters = given;
  waters["loader"]["dataset"]["min_waters"] = 3;
  CHECK_THAT(error_of(waters), Contains("loader.dataset.min_waters") && Contains("\"water\" only"));
  json nodes_on_qm9 = graphs_workload(qm9_loader());
  nodes_on_qm9["loader"]["dataset"]["max_nodes"] = 9;
  CHECK_THAT(error_of(nodes_on_qm9), Contains("loader.dataset.max_nodes") && Contains("\"uniform\" only"));
}

TEST_CASE("loader: PopTorch's options parse with their defaults, echo, and refuse bad values", "[loader][workload][unit]") {
  const Workload plain = parse_workload(graphs_workload(qm9_loader()), "w.json");
  CHECK(plain.model->loader->device_iterations == 1);
  CHECK_FALSE(plain.model->loader->synthetic_data);
  CHECK_FALSE(plain.model->loader->asynchronous);
  json options = qm9_loader();
  options["device_iterations"] = 4;
  options["synthetic_data"] = true;
  options["asynchronous"] = true;
  const Workload set = parse_workload(graphs_workload(options), "w.json");
  CHECK(set.model->loader->device_iterations == 4);
  CHECK(set.model->loader->synthetic_data);
  CHECK(set.model->loader->asynchronous);
  const json echo = to_json(set);
  CHECK(echo["loader"]["device_iterations"] == 4);
  CHECK(echo["loader"]["synthetic_data"] == true);
  CHECK(echo["loader"]["asynchronous"] == true);
  json zero = qm9_loader();
  zero["device_iterations"] = 0;
  CHECK_THAT(error_of(graphs_workload(zero)), Contains("loader.device_iterations"));
  json word = qm9_loader();
  word["synthetic_data"] = "yes";
  CHECK_THAT(error_of(graphs_workload(word)), Contains("loader.synthetic_data"));
  json typo = qm9_loader();
  typo["device_iteration"] = 4;
  CHECK_THAT(error_of(graphs_workload(typo)), Contains("device_iteration"));
}

// What the host sends with a batch: its features, edges and loss rows, not the trained parameters, their
// optimizer state or Adam's step number, which stay on the device.
TEST_CASE("loader: a batch's host inputs are its data, not the parameters or the optimizer's state", "[loader][workload][unit]") {
  const Workload w = parse_workload(graphs_workload(qm9_loader()), "w.json");
  const loaders::BatchSource source(w);
  const loaders::LoweredBatch lowered = loaders::lower_batch(w, source, 0, source.make(0), std::nullopt, false);
  const OpGraph& g = lowered.instance.graph;
  std::int64_t data = 0, kept = 0;
  for (const TensorId t : g.graph_inputs()) (is_kept_on_device(lowered.instance.training, t) ? kept : data) += g.tensor(t).bytes();
  CHECK(kept > 0);
  CHECK(lowered.shape.host_input_bytes == data);
  // At least the node features, float32.
  CHECK(lowered.shape.host_input_bytes >= lowered.shape.nodes * w.model->num_features * 4);
}

TEST_CASE("loader: the same seed makes the same batches, and a node keeps its features in every batch", "[loader][workload][unit]") {
  const Workload w = parse_workload(node_workload({{"kind", "neighbor"}, {"batch_size", 16}, {"fanouts", {4, 3}}}), "w.json");
  const loaders::BatchSource a(w), b(w);
  CHECK(a.batches_per_epoch() == (150 + 15) / 16);  // half of the 300 nodes train, 16 seeds per batch
  for (const std::int64_t k : std::vector<std::int64_t>{0, 3, a.batches_per_epoch()}) {  // the last: the second epoch's first batch
    const loaders::Batch x = a.make(k), y = b.make(k);
    CHECK(x.global_nodes == y.global_nodes);
    CHECK(x.graph.src == y.graph.src);
    CHECK(x.graph.dst == y.graph.dst);
  }
  CHECK(a.make(0).global_nodes != a.make(a.batches_per_epoch()).global_nodes);  // each epoch its own shuffle

  // A node that two batches share has the same feature row in both.
  const loaders::Batch b0 = a.make(0), b1 = a.make(1);
  const auto l0 = loaders::lower_batch(w, a, 0, b0, std::nullopt), l1 = loaders::lower_batch(w, a, 1, b1, std::nullopt);
  auto x_of = [](const Instance& s) {
    for (std::size_t t = 0; t < s.graph.tensors.size(); ++t)
      if (s.graph.tensors[t].name == "x") return s.values.f32(static_cast<TensorId>(t));
    FAIL("no x");
    return std::vector<float>{};
  };
  const auto x0 = x_of(l0.instance), x1 = x_of(l1.instance);
  int shared = 0;
  for (std::size_t i = 0; i < b0.global_nodes.size(); ++i)
    for (std::size_t j = 0; j < b1.global_nodes.size(); ++j)
      if (b0.global_nodes[i] == b1.global_nodes[j]) {
        ++shared;
        CHECK(std::equal(x0.begin() + 6 * i, x0.begin() + 6 * (i + 1), x1.begin() + 6 * j));
      }
  CHECK(shared > 0);
}

TEST_CASE("loader: a padded neighbour batch computes the exact batch's loss and updates", "[loader][workload][kernels][unit]") {
  check_padding_is_neutral(parse_workload(node_workload({{"kind", "neighbor"}, {"batch_size", 40}, {"fanouts", {5, 3}}}), "w.json"), 4);
}

TEST_CASE("loader: a padded cluster batch computes the exact batch's loss and updates", "[loader][workload][kernels][unit]") {
  json gcn = json::array({{{"layer", "gcn"}, {"name", "conv1"}, {"out", 8}, {"activation", "relu"}},
                          {{"layer", "gcn"}, {"name", "conv2"}, {"out", 3}}});
  check_padding_is_neutral(parse_workload(node_workload({{"kind", "cluster"}, {"num_parts", 6}, {"clusters_per_batch", 2}}, gcn), "w.json"), 3);
}

TEST_CASE("loader: a padded batch of molecules computes the exact batch's loss and updates", "[loader][workload][kernels][unit]") {
  check_padding_is_neutral(parse_workload(graphs_workload(qm9_loader()), "w.json"), 3);
  json ce = {{"task", "graph"}, {"loss", "cross_entropy"}, {"pool", "mean"}, {"optimizer", {{"kind", "sgd"}, {"lr", 0.1}}}};
  check_padding_is_neutral(parse_workload(graphs_workload(qm9_loader(), ce), "w.json"), 2);
}

TEST_CASE("loader: a batch larger than the loader's fixed size is refused naming loader.fixed_size", "[loader][workload][unit]") {
  json l = qm9_loader();
  l["fixed_size"] = {{"num_nodes", 60}, {"num_edges", 400}, {"num_graphs", 7}};
  const Workload w = parse_workload(graphs_workload(l), "w.json");
  const loaders::BatchSource source(w);
  const loaders::Batch b = source.make(0);
  const loaders::PaddedShape shape = loaders::padded_shape(source, {b});
  CHECK(shape.from_loader);
  const std::string e = required_input_error_of([&] { loaders::lower_batch(w, source, 0, b, shape); });
  CHECK_THAT(e, Contains("loader.fixed_size"));
  CHECK_THAT(e, Contains("batch 1"));
}

