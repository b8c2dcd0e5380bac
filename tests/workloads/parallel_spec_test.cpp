// The "parallel" section of a workload (workloads/parallel/): defaults, the resolved echo, and every
// input error, each naming the file, the JSON path, what was expected and what was found.
#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/workload.hpp"

using nlohmann::json;
using namespace tilesim;
using namespace tilesim::workloads;
using Catch::Matchers::Contains;
using tilesim_test::required_input_error_of;

namespace {

// A 3-layer GCN training step on a small random graph, with `parallel` beside it.
json with_parallel(json parallel, bool train = true) {
  json w = {{"name", "p"},
            {"graph", {{"generator", "erdos_renyi"}, {"num_nodes", 64}, {"num_edges", 256}}},
            {"num_features", 8},
            {"model", json::array({{{"layer", "gcn"}, {"name", "a"}, {"out", 8}},
                                   {{"layer", "gcn"}, {"name", "b"}, {"out", 8}},
                                   {{"layer", "gcn"}, {"name", "c"}, {"out", 4}}})},
            {"parallel", std::move(parallel)}};
  if (train) w["train"] = {{"task", "node"}, {"loss", "cross_entropy"}, {"optimizer", {{"kind", "sgd"}}}};
  return w;
}

std::string parallel_error_of(const json& document) {
  return required_input_error_of([&] { parse_workload(document, "w.json"); });
}

}  // namespace

TEST_CASE("parallel: defaults, every key read, and the echo is itself valid input", "[parallel][unit]") {
  const Workload plain = parse_workload(with_parallel(json::object()), "w.json");
  REQUIRE(plain.parallel);
  CHECK(plain.parallel->replicas == 1);
  CHECK(plain.parallel->gradient_accumulation == 1);
  CHECK(plain.parallel->allreduce == parallel::AllreduceAlgorithm::ring);
  CHECK(plain.parallel->partitions == 1);
  CHECK(plain.parallel->merge_allreduce);
  CHECK_FALSE(plain.parallel->pipeline);
  CHECK(plain.parallel->devices() == 1);

  const json section = {{"replicas", 2},
                        {"gradient_accumulation", 3},
                        {"allreduce", "hierarchical"},
                        {"merge_allreduce", false},
                        {"pipeline", {{"stages", {{"a", "b"}, {"c"}}}, {"micro_batches", 4}, {"schedule", "1f1b"}}}};
  const Workload w = parse_workload(with_parallel(section), "w.json");
  REQUIRE(w.parallel);
  CHECK(w.parallel->replicas == 2);
  CHECK(w.parallel->gradient_accumulation == 3);
  CHECK(w.parallel->allreduce == parallel::AllreduceAlgorithm::hierarchical);
  CHECK_FALSE(w.parallel->merge_allreduce);
  REQUIRE(w.parallel->pipeline);
  CHECK(w.parallel->pipeline->stages == std::vector<std::vector<std::string>>{{"a", "b"}, {"c"}});
  CHECK(w.parallel->pipeline->micro_batches == 4);
  CHECK(w.parallel->pipeline->schedule == parallel::PipelineSchedule::one_f_one_b);
  CHECK(w.parallel->stages() == 2);
  CHECK(w.parallel->devices() == 4);
  CHECK(parallel::to_string(*w.parallel) == "2 replicas (hierarchical all-reduce per gradient tensor, 3 micro-steps per all-reduce) x 2 pipeline stages (1f1b, 4 micro-batches)");

  const json echo = to_json(w);
  REQUIRE(echo.contains("parallel"));
  CHECK(echo["parallel"]["pipeline"]["schedule"] == "1f1b");
  CHECK(echo["parallel"]["partitions"] == 1);
  CHECK(echo["parallel"]["merge_allreduce"] == false);
  json again = echo;
  again.erase("source_file");
  const Workload reparsed = parse_workload(again, "echo.json");
  CHECK(parallel::to_json(*reparsed.parallel) == echo["parallel"]);
  // A workload without the section echoes none.
  json none = with_parallel(json::object());
  none.erase("parallel");
  CHECK_FALSE(to_json(parse_workload(none, "w.json")).contains("parallel"));
}

TEST_CASE("parallel: bad sections name the file, the JSON path, what was expected and what was found", "[parallel][unit]") {
  CHECK(parallel_error_of(with_parallel({{"replica", 2}})) ==
        "w.json: parallel.replica: expected one of the known keys (\"allreduce\", \"gradient_accumulation\", \"merge_allreduce\", "
        "\"partitions\", \"pipeline\", \"replicas\"), found unknown key \"replica\"");
  CHECK(parallel_error_of(with_parallel({{"replicas", 2}, {"merge_allreduce", "no"}})) ==
        "w.json: parallel.merge_allreduce: expected true or false, found \"no\"");
  CHECK(parallel_error_of(with_parallel({{"replicas", 2}, {"merge_allreduce", false}}, false)) ==
        "w.json: parallel.merge_allreduce: expected no \"merge_allreduce\" without a \"train\" section (it says how the "
        "gradients are all-reduced), found false");
  CHECK(parallel_error_of(with_parallel({{"replicas", 0}})) == "w.json: parallel.replicas: expected a positive integer, found 0");
  CHECK(parallel_error_of(with_parallel({{"replicas", 100000}})) ==
        "w.json: parallel.replicas: expected a positive integer at most 65536 (replicas, stages, micro-batches, partitions and "
        "micro-steps of one step), found 100000");
  CHECK_THAT(parallel_error_of(with_parallel({{"gradient_accumulation", 0}})), Contains("w.json: parallel.gradient_accumulation: expected a positive integer"));
  CHECK(parallel_error_of(with_parallel({{"gradient_accumulation", 2}}, false)) ==
        "w.json: parallel.gradient_accumulation: expected 1 or no \"gradient_accumulation\" without a \"train\" section (it "
        "accumulates gradients over micro-steps), found 2");
  CHECK(parallel_error_of(with_parallel({{"allreduce", "tree"}})) ==
        "w.json: parallel.allreduce: expected one of \"ring\", \"hierarchical\", found \"tree\"");
  CHECK(parallel_error_of(with_parallel({{"pipeline", {{"stages", {{"a", "b", "c"}}}, {"schedule", "pipedream"}}}})) ==
        "w.json: parallel.pipeline.schedule: expected one of \"gpipe\", \"1f1b\", found \"pipedream\"");
  CHECK(parallel_error_of(with_parallel({{"pipeline", {{"stages", json::array()}}}})) ==
        "w.json: parallel.pipeline.stages: expected a non-empty array, found an array of 0");
  CHECK(parallel_error_of(with_parallel({{"pipeline", {{"stages", {{"a", "b"}, json::array(), {"c"}}}}}})) ==
        "w.json: parallel.pipeline.stages[1]: expected a non-empty array of layer names (the layers of one stage), found an array of 0");
  CHECK(parallel_error_of(with_parallel({{"pipeline", {{"stages", json::array({json::array({"a", "b"})})}}}})) ==
        "w.json: parallel.pipeline.stages: expected every layer of the model in a stage, found \"c\" in none");
  CHECK(parallel_error_of(with_parallel({{"pipeline", {{"stages", json::array({json::array({"a", "b"}), json::array({"b", "c"})})}}}})) ==
        "w.json: parallel.pipeline.stages[1][0]: expected each layer in one stage only, found \"b\", already in parallel.pipeline.stages[0]");
  CHECK(parallel_error_of(with_parallel({{"pipeline", {{"stages", {{"a", "x"}, {"c"}}}}}})) ==
        "w.json: parallel.pipeline.stages[0][1]: expected a layer name of the model (\"a\", \"b\", \"c\"), found \"x\"");
  CHECK_THAT(parallel_error_of(with_parallel({{"pipeline", {{"stages", {{"a", "c"}, {"b"}}}}}})),
             Contains("w.json: parallel.pipeline.stages[0][1]: expected the model's layers in order over the stages") && Contains("found \"c\""));
  CHECK_THAT(parallel_error_of(with_parallel({{"pipeline", {{"stages", {{"a", "b", "c"}}}, {"micro_batches", 0}}}})),
             Contains("w.json: parallel.pipeline.micro_batches: expected a positive integer"));
  CHECK_THAT(parallel_error_of(with_parallel({{"partitions", 0}})), Contains("w.json: parallel.partitions: expected a positive integer"));
  CHECK_THAT(parallel_error_of(with_parallel({{"partitions", 2}, {"pipeline", {{"stages", {{"a", "b", "c"}}}}}})),
             Contains("w.json: parallel.partitions: expected 1 or no \"partitions\" beside a \"pipeline\""));
  CHECK(parse_workload(with_parallel({{"replicas", 256}, {"partitions", 256}}), "w.json").parallel->devices() == 65536);
  CHECK(parallel_error_of(with_parallel({{"replicas", 512}, {"partitions", 256}})) ==
        "w.json: parallel: expected at most 65536 devices (replicas x stages x partitions), found 131072");
  CHECK(parallel_error_of(with_parallel(4)) ==
        "w.json: parallel: expected an object (\"replicas\", \"gradient_accumulation\", \"allreduce\", \"merge_allreduce\", \"pipeline\", \"partitions\"), found 4");

  // The section belongs to a model ...
  const json ops_only = {{"name", "p"},
                         {"ops", json::array({{{"op", "gather"}, {"num_inputs", 4}, {"num_features", 4}, {"num_outputs", 4}}})},
                         {"parallel", {{"replicas", 2}}}};
  CHECK(parallel_error_of(ops_only) == "w.json: parallel: expected a \"parallel\" section beside a \"model\" (it spreads the model's step over devices), found no \"model\"");
  // ... without ops beside it, and a pipeline is cut from the whole graph, not from a loader's batches.
  json with_ops = with_parallel({{"replicas", 2}});
  with_ops["ops"] = ops_only["ops"];
  CHECK_THAT(parallel_error_of(with_ops), Contains("w.json: ops: expected no \"ops\" beside a \"parallel\" section"));
  json loader = with_parallel({{"pipeline", {{"stages", {{"a"}, {"b", "c"}}}}}});
  loader["loader"] = {{"kind", "cluster"}, {"num_parts", 4}};
  CHECK_THAT(parallel_error_of(loader), Contains("w.json: parallel.pipeline: expected no \"pipeline\" beside a \"loader\""));
}
