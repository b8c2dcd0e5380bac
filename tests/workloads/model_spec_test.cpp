// The workload format's model and schnet_block entries (workloads/layers/model_spec.hpp): the
// schnet_block op, the model's layer specs with their defaults, widths and errors, the model section
// of a workload (graph, num_features and model together), per-layer totals in `tilesim run`'s report,
// and dropout in a training step. The lowered layers themselves are in layers_test.cpp.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "ir/reference/reference.hpp"
#include "workloads/layers/layers.hpp"
#include "workloads/layers/model_spec.hpp"
#include "workloads/workload.hpp"
#include "tests/support/tensor_named.hpp"
#include "tests/support/test_support.hpp"

using namespace tilesim;
using namespace tilesim::workloads;
using namespace tilesim::workloads::layers;
using nlohmann::json;
using Catch::Matchers::Contains;

namespace {

using tilesim_test::tensor_named;

// The message parse_workload gives a document as the file w.json ("no error" when it takes it).
std::string workload_error(const json& doc) {
  try {
    parse_workload(doc, "w.json");
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

}  // namespace

TEST_CASE("schnet_block op lowers to one group of an InteractionBlock on random edges", "[layers][unit]") {
  const json doc = {{"name", "w"},
                    {"seed", 5},
                    {"ops", {{{"op", "schnet_block"}, {"num_inputs", 12}, {"num_features", 8}, {"num_outputs", 40}}}}};
  const Workload w = parse_workload(doc, "w.json");
  REQUIRE(w.ops.size() == 1);
  CHECK(w.ops[0].schnet_block);
  CHECK(w.ops[0].name == "schnet_block_0");
  CHECK(to_json(w)["ops"][0]["op"] == "schnet_block");
  // The echo is itself a valid workload.
  json echo = to_json(w);
  echo.erase("source_file");
  CHECK(parse_workload(echo, "w.json").ops.at(0).schnet_block);
  Instance inst = instantiate(w);
  REQUIRE(inst.graph.groups.size() == 1);
  const OpGroup& group = inst.graph.groups[0];
  CHECK(group.kind == "schnet");
  CHECK(group.name == "schnet_block_0");
  CHECK(group.op_count == inst.graph.ops.size());
  // Hidden = filters = num_features, 50 Gaussians over the num_outputs edges.
  const TensorId attr = tensor_named(inst.graph, "schnet_block_0.edges.gaussians50");
  CHECK(inst.graph.tensor(attr).shape == std::vector<std::int64_t>{40, 50});
  for (const Op& op : inst.graph.ops) {
    if (op.kind == OpKind::gather) CHECK(op.shape.num_outputs == 40);
    if (op.kind == OpKind::scatter_add) CHECK(op.shape.num_outputs == 12);
    if (op.kind == OpKind::matmul) CHECK(op.shape.out_features == 8);
  }
  const auto& src = inst.values.i32(tensor_named(inst.graph, "schnet_block_0.edges.src"));
  REQUIRE(src.size() == 40);
  CHECK(*std::max_element(src.begin(), src.end()) < 12);
  // Deterministic in the seed, different for another seed.
  Instance again = instantiate(w);
  CHECK(again.values.f32(attr) == inst.values.f32(attr));
  Workload other = w;
  other.seed = 6;
  CHECK(instantiate(other).values.f32(attr) != inst.values.f32(attr));
  // Every graph input has a value; the block evaluates without error.
  for (TensorId t : inst.graph.graph_inputs()) CHECK(inst.values.has(t));
}

TEST_CASE("schnet_block op errors: no indices key, sizes checked", "[layers][unit]") {
  json op = {{"op", "schnet_block"}, {"num_inputs", 12}, {"num_features", 8}, {"num_outputs", 40}, {"indices", "sorted"}};
  CHECK_THAT(workload_error({{"name", "w"}, {"ops", {op}}}), Contains("ops[0]") && Contains("indices"));
  op.erase("indices");
  op["num_features"] = 0;
  CHECK_THAT(workload_error({{"name", "w"}, {"ops", {op}}}), Contains("ops[0].num_features"));
}

TEST_CASE("Model layer specs: defaults, widths and errors", "[layers][unit]") {
  auto error_of = [](const json& model, std::int64_t in) {
    try {
      parse_model(model, "w.json", "model", in);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const auto model = parse_model(json::parse(R"([{"layer": "gat", "out": 8, "heads": 8, "activation": "relu"},
                                                 {"layer": "gcn", "out": 7}])"),
                                 "w.json", "model", 1433);
  REQUIRE(model.size() == 2);
  CHECK(model[0].name == "gat_0");
  CHECK(output_width(model[0], 1433) == 64);
  CHECK(model[0].negative_slope == Approx(0.2));
  CHECK(model[0].activation == UnaryFn::relu);
  CHECK(to_json(model[1], 64)["out"] == 7);
  CHECK_THAT(error_of(json::parse(R"([{"layer": "gnc", "out": 8}])"), 4), Contains("model[0].layer") && Contains("\"gcn\""));
  CHECK_THAT(error_of(json::parse(R"([{"layer": "gcn"}])"), 4), Contains("model[0].out"));
  CHECK_THAT(error_of(json::parse(R"([{"layer": "gcn", "out": 0}])"), 4), Contains("model[0].out"));
  CHECK_THAT(error_of(json::parse(R"([{"layer": "gcn", "out": 4, "heads": 2}])"), 4), Contains("heads"));
  CHECK_THAT(error_of(json::parse(R"([{"layer": "sage", "out": 4, "activation": "tanh"}])"), 4), Contains("model[0].activation"));
  // The sigmoid and softplus functions (CGConv's) are activations too, echoed by name.
  const auto gated = parse_model(json::parse(R"([{"layer": "gcn", "out": 4, "activation": "softplus"}, {"layer": "linear", "out": 1, "activation": "sigmoid"}])"),
                                 "w.json", "model", 8);
  CHECK(gated.at(0).activation == UnaryFn::softplus);
  CHECK(gated.at(1).activation == UnaryFn::sigmoid);
  CHECK(to_json(gated.at(1), 4)["activation"] == "sigmoid");
  CHECK_THAT(error_of(json::parse(R"([{"layer": "schnet", "out": 8}])"), 4), Contains("model[0].out") && Contains("4"));
  CHECK_THAT(error_of(json::parse(R"([{"layer": "gcn", "out": 4, "name": "a"}, {"layer": "gcn", "out": 4, "name": "a"}])"), 4),
             Contains("model[1].name"));
  CHECK_THAT(error_of(json::array(), 4), Contains("model"));
}

TEST_CASE("An unknown layer key is told every key the layer accepts, optional ones too", "[layers][unit]") {
  auto error_of = [](const json& model) {
    try {
      parse_model(model, "w.json", "model", 4);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // "activaton" is a misspelt optional key: the list must offer the optional keys, not only the required.
  const std::string gcn = error_of(json::parse(R"([{"layer": "gcn", "out": 16, "activaton": "relu"}])"));
  CHECK_THAT(gcn, Contains("w.json: model[0].activaton: expected one of the known keys (\"activation\", "
                           "\"available_memory_proportion\", \"bias\", \"input_dropout\", \"layer\", \"name\", \"out\"), found unknown key \"activaton\""));
  // Each kind lists its own optional keys, and only those.
  const std::string gat = error_of(json::parse(R"([{"layer": "gat", "out": 16, "head": 2}])"));
  CHECK_THAT(gat, Contains("\"heads\"") && Contains("\"negative_slope\"") && Contains("\"attention_dropout\"") && Contains("\"bias\"") &&
                      Contains("\"attention\"") && !Contains("\"hidden\""));
  // A pool keeps the width and takes no "out" or "bias"; only linear layers may follow it.
  const auto pooled = parse_model(json::parse(R"([{"layer": "gcn", "out": 6}, {"layer": "pool", "reduce": "mean"},
                                                  {"layer": "linear", "out": 2}])"), "w.json", "model", 4);
  CHECK(pooled.at(1).kind == LayerKind::pool);
  CHECK(pooled.at(1).pool_reduce == PoolReduce::mean);
  CHECK(output_width(pooled.at(1), 6) == 6);
  CHECK(to_json(pooled.at(1), 6) == json({{"layer", "pool"}, {"name", "pool_1"}, {"reduce", "mean"}, {"activation", "none"}}));
  CHECK_THAT(error_of(json::parse(R"([{"layer": "pool", "out": 4}])")), Contains("model[0].out") && Contains("unknown key"));
  CHECK_THAT(error_of(json::parse(R"([{"layer": "pool", "bias": false}])")), Contains("model[0].bias") && Contains("unknown key"));
  CHECK(error_of(json::parse(R"([{"layer": "pool"}, {"layer": "sage", "out": 4}])")) ==
        "w.json: model[1].layer: expected \"linear\" after the \"pool\" layer model[0] (its rows are graphs, with no edges to pass "
        "messages over), found \"sage\"");
  CHECK(error_of(json::parse(R"([{"layer": "pool", "reduce": "max"}])")) ==
        "w.json: model[0].reduce: expected one of \"add\", \"mean\", found \"max\"");
  // FiLM's aggregation: one of three, echoed (mean when not given); film and cgconv take it, no other layer does.
  CHECK(error_of(json::parse(R"([{"layer": "film", "out": 8, "aggr": "min"}])")) ==
        "w.json: model[0].aggr: expected one of \"mean\", \"add\", \"max\", found \"min\"");
  const auto film = parse_model(json::parse(R"([{"layer": "film", "out": 8, "aggr": "max"}, {"layer": "film", "out": 4}])"), "w.json", "model", 8);
  CHECK(film.at(0).aggregation == MessageAggregation::max);
  CHECK(to_json(film.at(1), 8)["aggr"] == "mean");
  // CGConv keeps its width (out defaults to it and must equal it) and aggregates by add unless told.
  const auto cg = parse_model(json::parse(R"([{"layer": "cgconv"}, {"layer": "cgconv", "out": 8, "aggr": "mean"}])"), "w.json", "model", 8);
  CHECK(cg.at(0).out_features == 8);
  CHECK(to_json(cg.at(0), 8)["aggr"] == "add");
  CHECK(cg.at(1).aggregation == MessageAggregation::mean);
  CHECK(error_of(json::parse(R"([{"layer": "cgconv", "out": 16}])")) ==
        "w.json: model[0].out: expected the layer's input width 4 (CGConv keeps its width: out = x + the aggregated messages), found 16");
  // The echo is itself a valid layer, read back the same.
  CHECK(parse_model(json::array({to_json(film.at(0), 8)}), "w.json", "model", 8).at(0).aggregation == MessageAggregation::max);
  CHECK_THAT(error_of(json::parse(R"([{"layer": "gcn", "out": 8, "aggr": "max"}])")), Contains("model[0]") && Contains("aggr"));
  // Where the attention logits are computed: one of two, echoed either way.
  CHECK(error_of(json::parse(R"([{"layer": "gat", "out": 16, "attention": "per_head"}])")) ==
        "w.json: model[0].attention: expected one of \"per_node\", \"per_edge\", found \"per_head\"");
  const auto per_edge = parse_model(json::parse(R"([{"layer": "gat", "out": 4, "heads": 2, "attention": "per_edge"}])"), "w.json", "model", 8);
  CHECK(per_edge.at(0).gat_attention == GatAttention::per_edge);
  CHECK(group_kind(per_edge.at(0)) == "gat_per_edge");
  CHECK(to_json(per_edge.at(0), 8)["attention"] == "per_edge");
  CHECK(to_json(parse_model(json::parse(R"([{"layer": "gat", "out": 4}])"), "w.json", "model", 8).at(0), 8)["attention"] == "per_node");
  const std::string gin = error_of(json::parse(R"([{"layer": "gin", "out": 16, "hiden": 2}])"));
  CHECK_THAT(gin, Contains("\"hidden\"") && Contains("\"eps\"") && Contains("\"nn\"") && !Contains("\"heads\""));
  // GIN's nn: one of two, and a hidden width only for the MLP, which one Linear would silently drop.
  CHECK_THAT(error_of(json::parse(R"([{"layer": "gin", "out": 16, "nn": "mlp3"}])")),
             Contains("w.json: model[0].nn") && Contains("\"mlp\"") && Contains("\"linear\"") && Contains("\"mlp3\""));
  CHECK_THAT(error_of(json::parse(R"([{"layer": "gin", "out": 16, "nn": "linear", "hidden": 8}])")),
             Contains("w.json: model[0].hidden") && Contains("no \"hidden\" for \"nn\": \"linear\"") && Contains("found 8"));
  CHECK(error_of(json::parse(R"([{"layer": "gin", "out": 16, "nn": "linear"}, {"layer": "linear", "out": 1}])")) == "no error");
  // A linear layer takes the keys every layer takes, and none of a convolution's.
  CHECK_THAT(error_of(json::parse(R"([{"layer": "linear", "out": 4, "heads": 2}])")),
             Contains("w.json: model[0].heads") && Contains("unknown key") && !Contains("\"hidden\""));
  CHECK_THAT(error_of(json::parse(R"([{"layer": "linar", "out": 4}])")), Contains("\"linear\""));
}

TEST_CASE("A workload with model keys but no model is told that the model is missing", "[layers][unit]") {
  // Before, this asked for a "graph" object "for the model", naming neither what was missing nor why.
  CHECK_THAT(workload_error({{"name", "w"}, {"num_features", 8}}),
             Contains("w.json: model: expected a \"model\" array of layers (\"num_features\" belongs with a model") &&
                 Contains("found none"));
  const json graph = {{"generator", "erdos_renyi"}, {"num_nodes", 40}, {"num_edges", 160}};
  CHECK_THAT(workload_error({{"name", "w"}, {"graph", graph}, {"num_features", 8}}),
             Contains("w.json: model: expected a \"model\" array of layers (\"graph\", \"num_features\" belong with a model"));
}

TEST_CASE("Workload model section: graph, num_features and model belong together", "[layers][unit]") {
  const json graph = {{"generator", "erdos_renyi"}, {"num_nodes", 40}, {"num_edges", 160}};
  CHECK_THAT(workload_error({{"name", "w"}, {"model", json::parse(R"([{"layer": "gcn", "out": 4}])")}}), Contains("graph"));
  CHECK_THAT(workload_error({{"name", "w"}}), Contains("ops"));
  CHECK_THAT(workload_error({{"name", "w"}, {"graph", graph}, {"model", json::parse(R"([{"layer": "gcn", "out": 4}])")}}),
             Contains("w.json: num_features"));
  CHECK_THAT(workload_error({{"name", "w"}, {"graph", graph}, {"num_features", 8}}), Contains("w.json: model"));
  CHECK_THAT(workload_error({{"name", "w"}, {"graph", graph}, {"num_features", 8}, {"model", json::parse(R"([{"layer": "gnc", "out": 4}])")}}),
             Contains("w.json: model[0].layer: expected one of \"gcn\""));
  CHECK_THAT(workload_error({{"name", "w"}, {"graph", graph}, {"num_features", 8}, {"model", json::parse(R"([{"layer": "gcn", "out": 4, "heads": 2}])")}}),
             Contains("w.json: model[0].heads"));
  CHECK_THAT(workload_error({{"name", "w"}, {"graph", graph}, {"num_features", 0}, {"model", json::parse(R"([{"layer": "gcn", "out": 4}])")}}),
             Contains("w.json: num_features"));
  // An RGCN whose relation count differs from the graph's is found when the graph is built.
  json typed = graph;
  typed["num_relations"] = 4;
  const Workload rgcn = parse_workload(
      {{"name", "w"}, {"graph", typed}, {"num_features", 8}, {"model", json::parse(R"([{"layer": "rgcn", "out": 4, "num_relations": 3}])")}},
      "w.json");
  try {
    build_graph(rgcn);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK_THAT(std::string(e.what()), Contains("w.json: model[0].num_relations") && Contains("4"));
  }
  const Workload untyped = parse_workload(
      {{"name", "w"}, {"graph", graph}, {"num_features", 8}, {"model", json::parse(R"([{"layer": "gcn", "out": 4}, {"layer": "rgcn", "out": 4}])")}},
      "w.json");
  try {
    build_graph(untyped);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK_THAT(std::string(e.what()), Contains("w.json: model[1].num_relations") && Contains("no relation types"));
  }
  // An RGCN without "num_relations" takes the graph's, known once the graph is built: the echo leaves it
  // out, and reads back as the same workload (found by the fuzz target's echo check: it echoed 0,
  // which is not valid input).
  json echo = to_json(untyped);
  echo.erase("source_file");
  CHECK_FALSE(echo["model"][1].contains("num_relations"));
  json again = to_json(parse_workload(echo, "w.json"));
  again.erase("source_file");
  CHECK(again == echo);
  CHECK(to_json(rgcn)["model"][0]["num_relations"] == 3);
}

TEST_CASE("A workload with a model instantiates every input and echoes the resolved model", "[layers][unit]") {
  const json doc = json::parse(R"({
    "name": "m", "seed": 9,
    "ops": [{"op": "gather", "num_inputs": 8, "num_features": 4, "num_outputs": 16}],
    "graph": {"generator": "erdos_renyi", "num_nodes": 40, "num_edges": 160},
    "num_features": 8,
    "model": [{"layer": "sage", "out": 6, "activation": "relu"}, {"layer": "gat", "out": 2, "heads": 2}]})");
  const Workload w = parse_workload(doc, "m.json");
  REQUIRE(w.model);
  const json echo = to_json(w);
  CHECK(echo["num_features"] == 8);
  CHECK(echo["model"][1]["heads"] == 2);
  CHECK(echo["model"][1]["negative_slope"].get<double>() == Approx(0.2));
  CHECK(echo["model"][0]["activation"] == "relu");
  CHECK(echo["graph"]["generator"] == "erdos_renyi");
  // The echo is itself a valid workload with the same graph.
  json again = echo;
  again.erase("source_file");
  CHECK(build_graph(parse_workload(again, "m.json")).ops.size() == build_graph(w).ops.size());
  // So is a model-only workload's echo, which has no "ops".
  json model_only = doc;
  model_only.erase("ops");
  json echo_only = to_json(parse_workload(model_only, "m.json"));
  CHECK_FALSE(echo_only.contains("ops"));
  echo_only.erase("source_file");
  CHECK(parse_workload(echo_only, "m.json").model->layers.size() == 2);

  Instance inst = instantiate(w);
  // The plain gather keeps its op position and values; the model's groups follow it.
  CHECK(inst.graph.ops[0].name == "gather_0");
  REQUIRE(inst.graph.groups.size() == 2);
  CHECK(inst.graph.groups[0].first_op == 1);
  CHECK(inst.graph.groups[1].first_op + inst.graph.groups[1].op_count == inst.graph.ops.size());
  for (TensorId t : inst.graph.graph_inputs()) {
    INFO(inst.graph.tensor(t).name);
    CHECK(inst.values.has(t));
  }
  // Weights are Glorot-uniform: inside +-sqrt(6 / (fan_in + fan_out)) and not all equal.
  const auto& w_l = inst.values.f32(tensor_named(inst.graph, "sage_0.lin_l.weight"));
  const double bound = std::sqrt(6.0 / (8 + 6));
  CHECK(std::all_of(w_l.begin(), w_l.end(), [&](float v) { return std::abs(v) <= bound; }));
  CHECK(*std::max_element(w_l.begin(), w_l.end()) > 0.5 * bound);
  // Evaluated op by op, every output is finite.
  for (const Op& op : inst.graph.ops) {
    auto out = reference::compute(op, inst.values);
    CHECK(std::all_of(out.begin(), out.end(), [](float v) { return std::isfinite(v); }));
    inst.values.set_f32(op.output, std::move(out));
  }
}

TEST_CASE("tilesim run reports per-layer totals beside the per-op rows", "[layers][cli]") {
  namespace t = tilesim_test;
  const auto dir = t::scratch("layers_cli");
  const auto w = t::write_text(dir / "m.json", R"({"name": "m", "graph": {"generator": "erdos_renyi", "num_nodes": 64, "num_edges": 256},
    "num_features": 8, "model": [{"layer": "gcn", "name": "conv1", "out": 8, "activation": "relu"}, {"layer": "gin", "name": "conv2", "out": 4}]})");
  const auto r = t::run_tilesim("run " + w.string() + " --backends cpu --json --repeats 1 --warmup 0 --out " + (dir / "out").string(), dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json report = json::parse(r.out);
  const json& result = report["results"][0];
  REQUIRE(result["groups"].size() == 2);
  const json& conv1 = result["groups"][0];
  CHECK(conv1["name"] == "conv1");
  CHECK(conv1["kind"] == "gcn");
  CHECK(conv1["ops"] == 11);
  double time = 0, flops = 0;
  for (int i = 0; i < 11; ++i) {
    time += result["ops"][i]["time_s"].get<double>();
    flops += result["ops"][i]["flops"].get<double>();
  }
  CHECK(conv1["time_s"].get<double>() == Approx(time));
  CHECK(conv1["flops"].get<double>() == Approx(flops));
  CHECK(conv1["intensity_flops_per_byte"].get<double>() == Approx(flops / conv1["min_bytes"].get<double>()));
  CHECK(conv1["verified"] == true);
  // The printed table has a total line per layer.
  const auto table = t::run_tilesim("run " + w.string() + " --backends cpu --repeats 1 --warmup 0 --out " + (dir / "out2").string(), dir);
  CHECK_THAT(table.out, Contains("= conv1") && Contains("= conv2") && Contains("FLOP/B"));
}

TEST_CASE("dropout in a training step: the input (and GAT's attention) times a mask of 0 or 1/(1-p), none in inference",
          "[layers][unit]") {
  json doc = {{"name", "drop"},
              {"seed", 4},
              {"graph", {{"generator", "erdos_renyi"}, {"num_nodes", 400}, {"num_edges", 2400}}},
              {"num_features", 16},
              {"model", json::array({{{"layer", "gat"}, {"name", "c1"}, {"out", 8}, {"heads", 2}, {"activation", "relu"}, {"input_dropout", 0.5},
                                      {"attention_dropout", 0.6}},
                                     {{"layer", "sage"}, {"name", "c2"}, {"out", 4}, {"input_dropout", 0.25}}})}};
  // Inference: PyTorch's eval mode drops nothing, so no dropout op.
  const Instance inference = instantiate(parse_workload(doc, "w.json"));
  for (const Op& op : inference.graph.ops) CHECK(op.name.find("dropout") == std::string::npos);
  doc["train"] = {{"task", "node"}, {"loss", "cross_entropy"}, {"train_fraction", 0.5}, {"optimizer", {{"kind", "adam"}}}};
  const Workload w = parse_workload(doc, "w.json");
  Instance step = instantiate(w);
  std::map<std::string, double> p_of = {{"c1.input_dropout", 0.5}, {"c1.attention_dropout", 0.6}, {"c2.input_dropout", 0.25}};
  for (const auto& [name, p] : p_of) {
    INFO(name);
    const auto it = std::find_if(step.graph.ops.begin(), step.graph.ops.end(), [&](const Op& op) { return op.name == name; });
    REQUIRE(it != step.graph.ops.end());
    CHECK(it->kind == OpKind::binary);
    CHECK(it->binary == BinaryFn::multiply);
    CHECK(step.graph.tensor(it->weight).shape == step.graph.tensor(it->input).shape);
    const std::vector<float>& mask = step.values.f32(it->weight);
    std::size_t dropped = 0;
    for (float m : mask) {
      CHECK((m == 0.0f || m == static_cast<float>(1.0 / (1.0 - p))));
      dropped += m == 0.0f;
    }
    // The share dropped is p, within four standard deviations of a binomial draw.
    const double n = static_cast<double>(mask.size());
    CHECK(std::abs(static_cast<double>(dropped) / n - p) < 4 * std::sqrt(p * (1 - p) / n));
  }
  // The mask is no parameter: its gradient is never computed, the input's is (c2's input comes from c1).
  int input_grads = 0;
  for (const Op& op : step.graph.ops)
    if (op.grad_of == "c2.input_dropout" || op.grad_of == "c1.attention_dropout") {
      INFO(op.name);
      CHECK(op.name.size() > 11);
      CHECK(op.name.substr(op.name.size() - 11) == ".grad.input");
      ++input_grads;
    }
  CHECK(input_grads == 2);
  // The same seed draws the same masks; the echo keeps the probabilities.
  json echo = to_json(w);
  echo.erase("source_file");
  CHECK(echo["model"][0]["input_dropout"] == 0.5);
  CHECK(echo["model"][0]["attention_dropout"] == 0.6);
  CHECK(echo["model"][1]["input_dropout"] == 0.25);
  CHECK(parse_workload(echo, "w.json").model->layers[1].input_dropout == 0.25);
  // Probabilities outside [0, 1), attention dropout on a layer without attention.
  doc["model"][1]["input_dropout"] = 1;
  CHECK_THAT(workload_error(doc), Contains("model[1].input_dropout") && Contains("a dropout probability in [0, 1)") && Contains("found 1"));
  doc["model"][1]["input_dropout"] = -0.1;
  CHECK_THAT(workload_error(doc), Contains("model[1].input_dropout"));
  doc["model"][1]["input_dropout"] = 0.25;
  doc["model"][1]["attention_dropout"] = 0.5;
  CHECK_THAT(workload_error(doc), Contains("model[1]") && Contains("attention_dropout") && Contains("input_dropout"));
}
