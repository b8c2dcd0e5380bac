// Workload sweeps (workloads/workload_sweep.hpp, workloads/json_path.hpp): axis paths with [N] and [*],
// values set into the base workload, crossed and zipped axes in their documented order, "batch_sizes"
// as the shorthand for the loader's batch size, and the errors: each names the sweep file, the axis and
// the path, and a bad point value is the workload reader's own message with the point's values.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/json_path.hpp"
#include "workloads/workload_sweep.hpp"

using Catch::Matchers::Contains;
namespace wsweep = tilesim::workloads;

namespace {

// A two-layer GCN on a small generated graph, inline in the sweep.
nlohmann::json wsweep_base_workload() {
  return nlohmann::json::parse(R"({
    "name": "gcn_small",
    "graph": {"generator": "erdos_renyi", "num_nodes": 64, "num_edges": 256},
    "num_features": 8,
    "model": [{"layer": "gcn", "out": 16, "activation": "relu"}, {"layer": "gcn", "out": 4}]
  })");
}

nlohmann::json wsweep_document(const nlohmann::json& axes) {
  return {{"name", "ws"}, {"workload", wsweep_base_workload()}, {"axes", axes}, {"backends", {"gpu-model:a100-40gb:eager"}}};
}

std::string wsweep_error(const nlohmann::json& document) {
  return tilesim_test::required_input_error_of([&] { wsweep::parse_workload_sweep(document, "s.json"); });
}

}  // namespace

TEST_CASE("workload sweep paths: keys, [N] and [*], and what is not a path", "[sweep][unit]") {
  const auto p = wsweep::parse_json_path("model[*].out");
  REQUIRE(p);
  REQUIRE(p->steps.size() == 3);
  CHECK(p->steps[0].key == "model");
  CHECK(p->steps[1].kind == wsweep::JsonPathStep::Kind::every);
  CHECK(p->steps[2].key == "out");
  const auto q = wsweep::parse_json_path("parallel.pipeline.stages[1][0]");
  REQUIRE(q);
  REQUIRE(q->steps.size() == 5);
  CHECK(q->steps[3].kind == wsweep::JsonPathStep::Kind::index);
  CHECK(q->steps[3].index == 1);
  CHECK(q->steps[4].index == 0);
  for (const std::string bad : {"", ".out", "model.", "model..out", "model[", "model[x]", "model[-1]", "[0]", "model]", "model[1]out",
                                "model[1234567890]"}) {
    INFO(bad);
    CHECK_FALSE(wsweep::parse_json_path(bad));
  }
}

TEST_CASE("workload sweep paths: a value set at every element, one element, a new last key, why a path is not there", "[sweep][unit]") {
  nlohmann::json w = wsweep_base_workload();
  CHECK(wsweep::set_at_path(w, *wsweep::parse_json_path("model[*].out"), 64).empty());
  CHECK(w["model"][0]["out"] == 64);
  CHECK(w["model"][1]["out"] == 64);
  CHECK(wsweep::set_at_path(w, *wsweep::parse_json_path("model[1].activation"), "relu").empty());
  CHECK(w["model"][1]["activation"] == "relu");
  CHECK(w["model"][0]["activation"] == "relu");
  // The last key may be one the base leaves out (the reader judges it), a section on the way may not.
  CHECK(wsweep::set_at_path(w, *wsweep::parse_json_path("dtype"), "float16").empty());
  CHECK(w["dtype"] == "float16");
  CHECK(wsweep::set_at_path(w, *wsweep::parse_json_path("train.optimizer.lr"), 0.1) == "no \"train\" in the workload");
  CHECK(wsweep::set_at_path(w, *wsweep::parse_json_path("model[5].out"), 1) == "model has 2 elements, no model[5]");
  CHECK(wsweep::set_at_path(w, *wsweep::parse_json_path("graph[*].num_nodes"), 1) == "graph is an object, not an array");
  CHECK(wsweep::set_at_path(w, *wsweep::parse_json_path("model.out"), 1) == "model is an array of 2, not an object");
  CHECK(wsweep::set_at_path(w, *wsweep::parse_json_path("graph.generator.k"), 1) == "graph.generator is \"erdos_renyi\", not an object");
}

TEST_CASE("workload sweep: axes crossed in name order, the last fastest, zipped axes stepping together", "[sweep][unit]") {
  nlohmann::json doc = wsweep_document({{"model[*].out", {4, 16, 64}},
                                        {"graph.num_nodes", {64, 128}},
                                        {"name", {"small", "large"}}});
  doc["zip"] = nlohmann::json::array({nlohmann::json::array({"graph.num_nodes", "name"})});
  const wsweep::WorkloadSweepSpec s = wsweep::parse_workload_sweep(doc, "s.json");
  REQUIRE(s.axes.size() == 3);
  CHECK(s.axes[0].name == "graph.num_nodes");
  CHECK(s.axes[1].name == "model[*].out");
  CHECK(s.axes[2].name == "name");
  REQUIRE(s.dimensions.size() == 2);  // the zip group (at graph.num_nodes), then model[*].out
  CHECK(s.dimensions[0] == std::vector<std::size_t>{0, 2});
  CHECK(s.points() == 6);
  // Point 4: the second zip value (128 nodes, "large") with the second width.
  CHECK(s.value_indices(4) == std::vector<std::size_t>{1, 1, 1});
  const wsweep::WorkloadPoint p = wsweep::point_workload(s, 4);
  CHECK(p.workload.name == "large");
  CHECK(p.document["graph"]["num_nodes"] == 128);
  REQUIRE(p.workload.model->layers.size() == 2);
  CHECK(p.document["model"][0]["out"] == 16);
  CHECK(p.document["model"][1]["out"] == 16);
  CHECK(wsweep::point_label(s, 4) == "point 5 of 6 (graph.num_nodes=128, model[*].out=16, name=\"large\")");
  CHECK(wsweep::axis_cell(s.axes[2].values[1]) == "large");
  CHECK(wsweep::axis_cell(nlohmann::json::array({1, 2})) == "[1,2]");
  const nlohmann::json echo = wsweep::to_json(s);
  CHECK(echo["points"] == 6);
  CHECK(echo["axes"]["model[*].out"] == nlohmann::json::array({4, 16, 64}));
  CHECK(echo["workload_file"].is_null());
}

TEST_CASE("workload sweep: an axis over a whole section is set before the axes inside it", "[sweep][unit]") {
  // "model" sorts before "model[*].out": the layer count first, then every layer's width.
  const nlohmann::json two = wsweep_base_workload()["model"];
  nlohmann::json three = two;
  three.insert(three.begin(), two[0]);
  nlohmann::json doc = wsweep_document({{"model", {two, three}}, {"model[*].out", {8, 32}}});
  const wsweep::WorkloadSweepSpec s = wsweep::parse_workload_sweep(doc, "s.json");
  CHECK(s.points() == 4);
  const wsweep::WorkloadPoint p = wsweep::point_workload(s, 3);
  REQUIRE(p.workload.model->layers.size() == 3);
  for (const auto& layer : p.document["model"]) CHECK(layer["out"] == 32);
}

TEST_CASE("workload sweep: batch_sizes is the shorthand for an axis over the loader's batch size", "[sweep][unit]") {
  nlohmann::json w = wsweep_base_workload();
  w["train"] = {{"task", "node"}, {"loss", "cross_entropy"}, {"optimizer", {{"kind", "adam"}}}};
  w["loader"] = {{"kind", "neighbor"}, {"batch_size", 16}, {"fanouts", {5, 5}}};
  nlohmann::json doc = {{"name", "bs"}, {"workload", w}, {"batch_sizes", {8, 32}}, {"backends", {"ipu:bow"}}};
  const wsweep::WorkloadSweepSpec s = wsweep::parse_workload_sweep(doc, "s.json");
  REQUIRE(s.axes.size() == 1);
  CHECK(s.axes[0].name == "loader.batch_size");
  CHECK(s.axes[0].batch_knob);
  CHECK(s.points() == 2);
  CHECK(wsweep::point_workload(s, 1).workload.model->loader->batch_size == 32);
  CHECK(wsweep::to_json(s)["batch_sizes"] == nlohmann::json::array({8, 32}));
  // With another axis: crossed like any axis.
  doc["axes"] = {{"model[0].out", {4, 8, 16}}};
  CHECK(wsweep::parse_workload_sweep(doc, "s.json").points() == 6);
  // Both the shorthand and its axis: refused.
  doc["axes"] = {{"loader.batch_size", {4}}};
  CHECK(wsweep_error(doc) ==
        "s.json: batch_sizes: expected \"batch_sizes\" or an axis \"loader.batch_size\" (it is its shorthand), not both, found both");
  // A workload without a loader has no batch size.
  doc = {{"name", "bs"}, {"workload", wsweep_base_workload()}, {"batch_sizes", {8}}, {"backends", {"ipu:bow"}}};
  CHECK(wsweep_error(doc) == "s.json: loader: expected a workload with a \"loader\" (the sweep varies its batch size), found none");
}

TEST_CASE("workload sweep errors name the sweep file, the axis and the path", "[sweep][unit]") {
  CHECK(wsweep_error(wsweep_document({{"train.optimizer.lr", {0.01, 0.1}}})) ==
        "s.json: axes[\"train.optimizer.lr\"]: expected a path into the workload: every part of it there but the last key, which may "
        "be one the workload leaves to its default, found no \"train\" in the workload");
  CHECK(wsweep_error(wsweep_document({{"model[2].out", {8}}})) ==
        "s.json: axes[\"model[2].out\"]: expected a path into the workload: every part of it there but the last key, which may be one "
        "the workload leaves to its default, found model has 2 elements, no model[2]");
  CHECK_THAT(wsweep_error(wsweep_document({{"model[*.out", {8}}})),
             Contains("s.json: axes[\"model[*.out\"]: expected a JSON path of the workload") && Contains("found \"model[*.out\""));
  CHECK(wsweep_error(wsweep_document({{"model[*].out", nlohmann::json::array()}})) ==
        "s.json: axes[\"model[*].out\"]: expected a non-empty array of values (any JSON values), found an array of 0");
  CHECK(wsweep_error(wsweep_document({{"model[*].out", {8, 16, 8}}})) ==
        "s.json: axes[\"model[*].out\"][2]: expected each value once, found 8 twice");
  CHECK(wsweep_error(wsweep_document(nlohmann::json::object())) ==
        "s.json: axes: expected at least one axis (\"axes\": {\"model[*].out\": [16, 64]}) or \"batch_sizes\", found none");
  nlohmann::json zipped = wsweep_document({{"model[*].out", {8, 16}}, {"name", {"a", "b", "c"}}});
  zipped["zip"] = nlohmann::json::array({nlohmann::json::array({"model[*].out", "name"})});
  CHECK(wsweep_error(zipped) ==
        "s.json: zip[0][1]: expected an axis with as many values as \"model[*].out\" (2), found \"name\" with 3");
  zipped["zip"] = nlohmann::json::array({nlohmann::json::array({"model[*].out", "seed"})});
  CHECK(wsweep_error(zipped) ==
        "s.json: zip[0][1]: expected the name of an axis of the sweep (\"model[*].out\", \"name\"), found \"seed\"");
  nlohmann::json bad = wsweep_document({{"model[*].out", {8}}});
  bad["workload"] = 3;
  CHECK(wsweep_error(bad) ==
        "s.json: workload: expected a workload file's path (relative to the sweep file) or a workload object, found 3");
  bad = wsweep_document({{"model[*].out", {8}}});
  bad["name"] = "../up";
  CHECK_THAT(wsweep_error(bad), Contains("s.json: name: expected a name of 1 to 255 letters"));
  bad = wsweep_document({{"model[*].out", {8}}});
  bad["axis"] = {};
  CHECK_THAT(wsweep_error(bad), Contains("s.json: axis: expected one of the known keys") && Contains("\"axes\""));
}

TEST_CASE("workload sweep: a bad point value is the workload reader's message, with the point's values", "[sweep][unit]") {
  const wsweep::WorkloadSweepSpec s = wsweep::parse_workload_sweep(wsweep_document({{"model[*].out", {16, 0}}}), "s.json");
  CHECK_NOTHROW(wsweep::point_workload(s, 0));
  CHECK(tilesim_test::required_input_error_of([&] { wsweep::point_workload(s, 1); }) ==
        "s.json: point 2 of 2 (model[*].out=0): s.json: model[0].out: expected a positive integer, found 0");
  // A key the format does not have for that layer: the reader's unknown-key message.
  const wsweep::WorkloadSweepSpec heads = wsweep::parse_workload_sweep(wsweep_document({{"model[1].heads", {1, 4}}}), "s.json");
  CHECK_THAT(tilesim_test::required_input_error_of([&] { wsweep::point_workload(heads, 0); }),
             Contains("s.json: point 1 of 2 (model[1].heads=1): s.json: model[1].heads: expected one of the known keys") &&
                 Contains("found unknown key \"heads\""));
}

TEST_CASE("workload sweep: a base workload file is read relative to the sweep file, and its errors name it", "[sweep][unit]") {
  tilesim_test::TempDir dir("wsweep-file");
  dir.write("w/base.json", wsweep_base_workload().dump());
  nlohmann::json doc = wsweep_document({{"dtype", {"float32", "float64"}}});
  doc["workload"] = "w/base.json";
  const std::string sweep_file = dir.write("s.json", doc.dump());
  const wsweep::WorkloadSweepSpec s = wsweep::parse_workload_sweep(doc, sweep_file);
  CHECK(s.workload_file == dir.path("w/base.json"));
  CHECK_FALSE(s.inline_workload);
  CHECK(wsweep::point_workload(s, 0).workload.model->dtype == tilesim::DType::float32);
  CHECK_THAT(tilesim_test::required_input_error_of([&] { wsweep::point_workload(s, 1); }),
             Contains(sweep_file + ": point 2 of 2 (dtype=\"float64\"): " + dir.path("w/base.json") + ": dtype: expected \"float32\""));
  doc["workload"] = "w/missing.json";
  CHECK_THAT(tilesim_test::required_input_error_of([&] { wsweep::parse_workload_sweep(doc, sweep_file); }),
             Contains(dir.path("w/missing.json")));
}

TEST_CASE("workload sweep: a backend entry's machine axes make one what-if backend per combination, checked where they are", "[sweep][unit]") {
  nlohmann::json doc = wsweep_document({{"model[*].out", {4, 16}}});
  doc["backends"] = nlohmann::json::parse(R"([
    "gpu-model:a100-40gb:eager",
    {"backend": "ipu:bow", "machine": {"chip.sram_bytes_per_tile": {"scale": [0.5, 2]}, "chip.exchange_bytes_per_cycle": [4, 8]}},
    {"backend": "cpu-model:spr-2s"}
  ])");
  const wsweep::WorkloadSweepSpec s = wsweep::parse_workload_sweep(doc, "s.json");
  CHECK(s.backends == std::vector<std::string>{"gpu-model:a100-40gb:eager",
                                               "ipu:bow{chip.exchange_bytes_per_cycle=4;chip.sram_bytes_per_tile*=0.5}",
                                               "ipu:bow{chip.exchange_bytes_per_cycle=4;chip.sram_bytes_per_tile*=2}",
                                               "ipu:bow{chip.exchange_bytes_per_cycle=8;chip.sram_bytes_per_tile*=0.5}",
                                               "ipu:bow{chip.exchange_bytes_per_cycle=8;chip.sram_bytes_per_tile*=2}",
                                               "cpu-model:spr-2s"});
  CHECK(s.points() == 2);  // machines are backends, not points

  doc["backends"] = nlohmann::json::parse(R"([{"backend": "ipu:bow", "machine": {"chip.num_tiles": [736, 736]}}])");
  CHECK_THAT(wsweep_error(doc), Contains("s.json") && Contains("backends[0].machine[\"chip.num_tiles\"][1]") && Contains("each value once"));
  doc["backends"] = nlohmann::json::parse(R"([{"backend": "cpu", "machine": {"memory.transfers_per_s": [1e9]}}])");
  CHECK_THAT(wsweep_error(doc), Contains("backends[0]") && Contains("cpu"));
  doc["backends"] = nlohmann::json::parse(R"([{"backend": "ipu:bow", "machines": {}}])");
  CHECK_THAT(wsweep_error(doc), Contains("backends[0]") && Contains("machines"));
  doc["backends"] = nlohmann::json::parse(R"([42])");
  CHECK_THAT(wsweep_error(doc), Contains("backends[0]") && Contains("a backend name or {\"backend\": NAME"));
}
