// The workload layer: the examples, defaults, generated values and every input error users can make.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "workloads/loaders/batch_lowering.hpp"
#include "workloads/workload.hpp"
#include "tests/support/test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace tilesim;
using namespace tilesim::workloads;
using Catch::Matchers::Contains;

namespace {

using tilesim_test::required_input_error_of;

// A fresh folder per test, removed afterwards; the pid keeps tests that CTest runs in parallel apart.
using tilesim_test::TempDir;

json one_op(json op) { return {{"name", "w"}, {"ops", json::array({std::move(op)})}}; }

json gather(std::int64_t inputs, std::int64_t features, std::int64_t outputs) {
  return {{"op", "gather"}, {"num_inputs", inputs}, {"num_features", features}, {"num_outputs", outputs}};
}

json scatter_add(std::int64_t inputs, std::int64_t features, std::int64_t outputs) {
  return {{"op", "scatter_add"}, {"num_inputs", inputs}, {"num_features", features}, {"num_outputs", outputs}};
}


std::string parse_error_of(const json& document) {
  return required_input_error_of([&] { parse_workload(document, "w.json"); });
}

std::string examples_dir() { return std::string(TILESIM_SOURCE_DIR) + "/workloads/examples"; }

std::int64_t half_host_memory() { return static_cast<std::int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE) / 2; }

}  // namespace

TEST_CASE("workload: every example parses and instantiates", "[workload][unit]") {
  // Model examples on dataset-sized graphs are parsed only: building ogbn-arxiv's graph takes seconds.
  const std::set<std::string> parse_only = {"gcn_pubmed.json", "sage_arxiv.json", "sage_pubmed_train.json"};
  std::set<std::string> found;
  for (const auto& entry : fs::directory_iterator(examples_dir())) {
    if (entry.path().extension() != ".json") continue;
    const std::string path = entry.path().string();
    INFO(path);
    found.insert(entry.path().filename().string());
    const Workload w = load_workload(path);
    CHECK(w.name == entry.path().stem().string());
    CHECK(w.source_file == path);
    if (w.model) {
      CHECK(w.ops.empty());
      CHECK_FALSE(w.model->layers.empty());
      if (parse_only.count(entry.path().filename().string())) continue;
      if (w.model->loader) {
        // A loader's batches are lowered one by one (tests/workloads/minibatch_test.cpp); the dataset-sized graphs are
        // parsed only here, a dataset of small graphs makes its first batch.
        if (w.model->loader->kind != loaders::LoaderSpec::Kind::graphs) continue;
        const loaders::BatchSource source(w);
        CHECK(source.batches_per_epoch() > 0);
        const auto batch = loaders::lower_batch(w, source, 0, source.make(0), std::nullopt);
        CHECK(batch.instance.training.active() == w.model->train.has_value());
        for (TensorId t : batch.instance.graph.graph_inputs()) CHECK(batch.instance.values.has(t));
        continue;
      }
      const Instance instance = instantiate(w);
      // A training step adds the readout, the loss, a backward group per layer and the optimizer.
      std::size_t layer_groups = 0;
      for (const OpGroup& g : instance.graph.groups)
        for (const auto& layer : w.model->layers) layer_groups += g.name == layer.name || g.name == layer.name + ".grad";
      CHECK(layer_groups == (w.model->train ? 2 : 1) * w.model->layers.size());
      CHECK(instance.training.active() == w.model->train.has_value());
      for (TensorId t : instance.graph.graph_inputs()) CHECK(instance.values.has(t));
      continue;
    }
    REQUIRE_FALSE(w.ops.empty());
    const Instance instance = instantiate(w);
    REQUIRE(instance.graph.ops.size() == w.ops.size());
    CHECK(instance.graph.tensors.size() == 3 * w.ops.size());
    for (std::size_t i = 0; i < w.ops.size(); ++i) {
      const Op& op = instance.graph.ops[i];
      CHECK(op.name == w.ops[i].name);
      CHECK(op.kind == w.ops[i].kind);
      CHECK(instance.values.f32(op.input).size() ==
            static_cast<std::size_t>(op.shape.num_inputs * op.shape.num_features));
      CHECK(instance.values.i32(op.indices).size() == static_cast<std::size_t>(op.num_indices()));
      CHECK_FALSE(instance.values.has(op.output));
    }
  }
  const std::set<std::string> expected = {"default.json", "small.json", "sorted_scatter.json", "index_file.json",
                                          "hydronet_largest.json", "gcn_cora.json", "gcn_pubmed.json", "sage_arxiv.json",
                                          "gat_cora.json", "schnet_qm9.json", "rgcn.json", "gcn_cora_train.json",
                                          "sage_pubmed_train.json", "gin_molecules_train.json", "schnet_qm9_train.json",
                                          "gat_cora_train.json"};
  for (const auto& name : expected) CHECK(found.count(name) == 1);
}

TEST_CASE("workload: the largest hydronet example is the 4096x512 gather with 32768 lookups", "[workload][unit]") {
  const Workload w = load_workload(examples_dir() + "/hydronet_largest.json");
  REQUIRE(w.ops.size() == 1);
  CHECK(w.ops[0].kind == OpKind::gather);
  CHECK(w.ops[0].shape.num_inputs == 4096);
  CHECK(w.ops[0].shape.num_features == 512);
  CHECK(w.ops[0].shape.num_outputs == 32768);
  CHECK(w.ops[0].dtype == DType::float32);
}

TEST_CASE("workload: defaults are filled in", "[workload][unit]") {
  json doc = {{"name", "d"}, {"ops", json::array({gather(4, 2, 8), scatter_add(8, 2, 4), gather(1, 1, 1)})}};
  const Workload w = parse_workload(doc, "d.json");
  CHECK(w.name == "d");
  CHECK(w.seed == 0);
  CHECK(w.source_file == "d.json");
  REQUIRE(w.ops.size() == 3);
  CHECK(w.ops[0].name == "gather_0");
  CHECK(w.ops[1].name == "scatter_add_1");
  CHECK(w.ops[2].name == "gather_2");
  for (const auto& op : w.ops) {
    CHECK(op.dtype == DType::float32);
    CHECK(op.indices.distribution == IndexDistribution::uniform);
    CHECK(op.indices.file.empty());
  }
  CHECK(w.ops[1].kind == OpKind::scatter_add);
  CHECK(w.ops[1].shape.num_inputs == 8);
  CHECK(w.ops[1].shape.num_features == 2);
  CHECK(w.ops[1].shape.num_outputs == 4);
}

TEST_CASE("workload: integers written as exact floats are accepted", "[workload][unit]") {
  json op = gather(4, 2, 8);
  op["num_features"] = 2.0;
  const Workload w = parse_workload(one_op(op), "w.json");
  CHECK(w.ops[0].shape.num_features == 2);
}

TEST_CASE("workload: every form of indices is understood", "[workload][unit]") {
  TempDir dir;
  dir.write("idx.txt", "0\n1\n");
  const std::string workload_file = dir.path("w.json");
  struct Case {
    json indices;
    IndexDistribution expected;
  };
  const Case cases[] = {
      {"uniform", IndexDistribution::uniform},
      {"sorted", IndexDistribution::sorted},
      {{{"distribution", "uniform"}}, IndexDistribution::uniform},
      {{{"distribution", "sorted"}}, IndexDistribution::sorted},
      {{{"file", "idx.txt"}}, IndexDistribution::file},
  };
  for (const auto& c : cases) {
    INFO(c.indices.dump());
    json op = gather(4, 2, 2);
    op["indices"] = c.indices;
    const Workload w = parse_workload(one_op(op), workload_file);
    CHECK(w.ops[0].indices.distribution == c.expected);
  }
  CHECK(to_string(IndexDistribution::uniform) == "uniform");
  CHECK(to_string(IndexDistribution::sorted) == "sorted");
  CHECK(to_string(IndexDistribution::file) == "file");
}

TEST_CASE("workload: to_json echoes the resolved workload and reads back", "[workload][unit]") {
  json doc = {{"name", "echo"},
              {"seed", 42},
              {"ops", json::array({gather(16, 4, 32), scatter_add(32, 4, 16)})}};
  doc["ops"][1]["indices"] = "sorted";
  doc["ops"][1]["name"] = "s";
  const Workload w = parse_workload(doc, "echo.json");
  const json echo = to_json(w);
  CHECK(echo["name"] == "echo");
  CHECK(echo["seed"] == 42);
  CHECK(echo["source_file"] == "echo.json");
  CHECK(echo["ops"][0] == json({{"op", "gather"},
                                {"name", "gather_0"},
                                {"num_inputs", 16},
                                {"num_features", 4},
                                {"num_outputs", 32},
                                {"dtype", "float32"},
                                {"indices", {{"distribution", "uniform"}}}}));
  CHECK(echo["ops"][1]["indices"] == json({{"distribution", "sorted"}}));
  CHECK(echo["ops"][1]["name"] == "s");

  // Without the report-only key, the echo is itself a valid workload that means the same thing.
  json again = echo;
  again.erase("source_file");
  const Workload w2 = parse_workload(again, "echo.json");
  CHECK(to_json(w2) == echo);
}

TEST_CASE("workload: to_json gives an index file as written and as resolved", "[workload][unit]") {
  TempDir dir;
  dir.write("data/idx.txt", "1\n0\n");
  const std::string workload_file = dir.write("sub/w.json", "");
  json op = gather(2, 3, 2);
  op["indices"] = {{"file", "../data/idx.txt"}};
  const Workload w = parse_workload(one_op(op), workload_file);
  CHECK(fs::equivalent(w.ops[0].indices.file, dir.path("data/idx.txt")));
  CHECK(w.ops[0].indices.given_file == "../data/idx.txt");
  const json indices = to_json(w)["ops"][0]["indices"];
  CHECK(indices["distribution"] == "file");
  CHECK(indices["file"] == "../data/idx.txt");
  CHECK(indices["resolved_file"] == w.ops[0].indices.file);
}

TEST_CASE("workload: instantiate is deterministic in the seed", "[workload][unit]") {
  json doc = {{"name", "det"}, {"seed", 7}, {"ops", json::array({gather(64, 8, 256), gather(64, 8, 256)})}};
  doc["ops"][1]["name"] = "twin";
  const Workload w = parse_workload(doc, "det.json");
  const Instance a = instantiate(w);
  const Instance b = instantiate(w);
  const Op& op0 = a.graph.ops[0];
  const Op& op1 = a.graph.ops[1];
  CHECK(a.values.f32(op0.input) == b.values.f32(op0.input));
  CHECK(a.values.i32(op0.indices) == b.values.i32(op0.indices));
  CHECK(a.values.f32(op1.input) == b.values.f32(op1.input));
  CHECK(a.values.i32(op1.indices) == b.values.i32(op1.indices));

  // Two ops of the same shape get different values: the op position is part of the stream seed.
  CHECK(a.values.f32(op0.input) != a.values.f32(op1.input));
  CHECK(a.values.i32(op0.indices) != a.values.i32(op1.indices));

  Workload other = w;
  other.seed = 8;
  const Instance c = instantiate(other);
  CHECK(c.values.f32(op0.input) != a.values.f32(op0.input));
  CHECK(c.values.i32(op0.indices) != a.values.i32(op0.indices));

  // The generator is fixed, not whatever <random> distributions a standard library has: these are the
  // first values of seed 7, op 0, recorded once. A change here changes every user's results.
  const auto& values = a.values.f32(op0.input);
  const auto& indices = a.values.i32(op0.indices);
  CHECK(indices[0] == 17);
  CHECK(indices[1] == 4);
  CHECK(values[0] == Approx(1.01423371).epsilon(1e-6));
  CHECK(values[1] == Approx(0.739673138).epsilon(1e-6));
}

TEST_CASE("workload: generated values are standard normal", "[workload][unit]") {
  const Workload w = parse_workload(one_op(gather(4096, 64, 1)), "w.json");
  const Instance instance = instantiate(w);
  const auto& values = instance.values.f32(instance.graph.ops[0].input);
  REQUIRE(values.size() == 4096u * 64u);
  double sum = 0, sum_sq = 0;
  std::size_t within_one = 0;
  for (float v : values) {
    REQUIRE(std::isfinite(v));
    sum += v;
    sum_sq += static_cast<double>(v) * v;
    within_one += std::abs(v) < 1.0f;
  }
  const double n = static_cast<double>(values.size());
  const double mean = sum / n;
  const double variance = sum_sq / n - mean * mean;
  // 262144 samples: the standard error of the mean is 0.002, of the variance about 0.003.
  CHECK(std::abs(mean) < 0.01);
  CHECK(std::abs(variance - 1.0) < 0.015);
  CHECK(std::abs(static_cast<double>(within_one) / n - 0.6827) < 0.005);
}

TEST_CASE("workload: uniform indices cover the range, with repeats, and stay in it", "[workload][unit]") {
  // gather: num_outputs indices in [0, num_inputs); scatter_add: num_inputs indices in [0, num_outputs).
  json doc = {{"name", "u"}, {"seed", 3}, {"ops", json::array({gather(100, 1, 20000), scatter_add(30000, 1, 37)})}};
  const Instance instance = instantiate(parse_workload(doc, "u.json"));
  struct Expect {
    std::size_t count;
    std::int32_t range;
  };
  const Expect expect[] = {{20000, 100}, {30000, 37}};
  for (std::size_t i = 0; i < 2; ++i) {
    INFO("op " << i);
    const auto& indices = instance.values.i32(instance.graph.ops[i].indices);
    REQUIRE(indices.size() == expect[i].count);
    std::vector<int> histogram(static_cast<std::size_t>(expect[i].range), 0);
    for (auto index : indices) {
      REQUIRE(index >= 0);
      REQUIRE(index < expect[i].range);
      ++histogram[static_cast<std::size_t>(index)];
    }
    // Every value appears, and none far from its expected count (200 or 811 per value).
    const double mean = static_cast<double>(expect[i].count) / expect[i].range;
    for (int h : histogram) {
      CHECK(h > 0);
      CHECK(std::abs(h - mean) < 6 * std::sqrt(mean));
    }
    CHECK_FALSE(std::is_sorted(indices.begin(), indices.end()));
  }
}

TEST_CASE("workload: sorted indices are sorted, in range and uniform", "[workload][unit]") {
  json doc = {{"name", "s"}, {"ops", json::array({gather(1000, 2, 5000), scatter_add(5000, 2, 300)})}};
  doc["ops"][0]["indices"] = {{"distribution", "sorted"}};
  doc["ops"][1]["indices"] = "sorted";
  const Instance instance = instantiate(parse_workload(doc, "s.json"));
  const std::int32_t ranges[] = {1000, 300};
  for (std::size_t i = 0; i < 2; ++i) {
    INFO("op " << i);
    const auto& indices = instance.values.i32(instance.graph.ops[i].indices);
    REQUIRE(indices.size() == 5000u);
    CHECK(std::is_sorted(indices.begin(), indices.end()));
    CHECK(indices.front() >= 0);
    CHECK(indices.back() < ranges[i]);
    // Sorted, not a ramp: with repeats, and spread over the range.
    CHECK(std::adjacent_find(indices.begin(), indices.end()) != indices.end());
    CHECK(indices.front() < ranges[i] / 10);
    CHECK(indices.back() > ranges[i] - ranges[i] / 10);
  }
}

TEST_CASE("workload: index files are read", "[workload][unit]") {
  TempDir dir;
  SECTION("comments, blank lines, spaces and CRLF line ends") {
    const std::string path = dir.write("idx.txt", "# header\n3\r\n\n  0  \n\t# indented comment\n9\n2");
    const auto indices = read_index_file(path, 4, 10, "w.json", "ops[0].indices.file");
    CHECK(indices == std::vector<std::int32_t>{3, 0, 9, 2});
  }
  SECTION("instantiate uses the file, relative to the workload's folder") {
    dir.write("sub/idx.txt", "4\n0\n4\n1\n");
    const std::string workload_file = dir.write("sub/w.json", "");
    json doc = {{"name", "f"}, {"ops", json::array({gather(5, 3, 4), scatter_add(4, 3, 5)})}};
    doc["ops"][0]["indices"] = {{"file", "idx.txt"}};
    doc["ops"][1]["indices"] = {{"file", "idx.txt"}};
    const Instance instance = instantiate(parse_workload(doc, workload_file));
    for (const auto& op : instance.graph.ops) {
      CHECK(instance.values.i32(op.indices) == std::vector<std::int32_t>{4, 0, 4, 1});
    }
  }
  SECTION("the shipped example") {
    const Workload w = load_workload(examples_dir() + "/index_file.json");
    const Instance instance = instantiate(w);
    const std::vector<std::int32_t> expected = {0, 3, 3, 1, 5, 0, 2, 4, 4, 4, 1, 5};
    CHECK(instance.values.i32(instance.graph.ops[0].indices) == expected);
    CHECK(instance.values.i32(instance.graph.ops[1].indices) == expected);
  }
}

TEST_CASE("workload errors: unknown keys", "[workload][errors][unit]") {
  SECTION("top level") {
    json doc = one_op(gather(1, 1, 1));
    doc["sead"] = 3;
    CHECK_THAT(parse_error_of(doc), Contains("w.json: sead: expected one of the known keys (\"dtype\", \"graph\", \"loader\", \"model\", \"name\", \"num_features\", \"ops\", \"parallel\", \"seed\", \"train\"), "
                                             "found unknown key \"sead\""));
  }
  SECTION("inside an op") {
    json op = gather(1, 1, 1);
    op["num_feature"] = 3;
    const std::string message = parse_error_of(one_op(op));
    CHECK_THAT(message, Contains("w.json: ops[0].num_feature: expected one of the known keys ("));
    CHECK_THAT(message, Contains("\"num_features\""));
    CHECK_THAT(message, Contains("found unknown key \"num_feature\""));
  }
  SECTION("inside indices") {
    json op = scatter_add(1, 1, 1);
    op["indices"] = {{"distrib", "sorted"}};
    const std::string message = parse_error_of(one_op(op));
    CHECK_THAT(message, Contains("w.json: ops[0].indices.distrib: expected one of the known keys (\"distribution\", \"file\"), "
                                 "found unknown key \"distrib\""));
  }
  SECTION("beside a valid distribution") {
    json op = scatter_add(1, 1, 1);
    op["indices"] = {{"distribution", "sorted"}, {"seed", 1}};
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].indices.seed: expected one of the known keys"));
  }
}

TEST_CASE("workload errors: wrong types", "[workload][errors][unit]") {
  SECTION("a size as a string") {
    json op = gather(1, 1, 1);
    op["num_inputs"] = "4096";
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].num_inputs: expected a positive integer, found \"4096\""));
  }
  SECTION("a fractional size") {
    json op = gather(1, 1, 1);
    op["num_outputs"] = 1.5;
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].num_outputs: expected a positive integer, found 1.5"));
  }
  SECTION("indices as an array") {
    json op = gather(1, 1, 1);
    op["indices"] = json::array({0, 0});
    CHECK_THAT(parse_error_of(one_op(op)),
               Contains("w.json: ops[0].indices: expected \"uniform\", \"sorted\", {\"distribution\": \"uniform\" or "
                        "\"sorted\"} or {\"file\": PATH}, found an array of 2"));
  }
  SECTION("an op as an array") {
    json doc = {{"name", "w"}, {"ops", json::array({gather(1, 1, 1), json::array({1})})}};
    CHECK_THAT(parse_error_of(doc), Contains("w.json: ops[1]: expected an object, found an array of 1"));
  }
  SECTION("ops as an object") {
    json doc = {{"name", "w"}, {"ops", gather(1, 1, 1)}};
    CHECK_THAT(parse_error_of(doc), Contains("w.json: ops: expected a non-empty array, found an object"));
  }
  SECTION("the document as an array") {
    CHECK_THAT(parse_error_of(json::array()), Contains("w.json: (top level): expected an object, found an array of 0"));
  }
  SECTION("the name as a number") {
    json doc = one_op(gather(1, 1, 1));
    doc["name"] = 5;
    CHECK_THAT(parse_error_of(doc), Contains("w.json: name: expected a non-empty string, found 5"));
  }
  SECTION("the seed as a string") {
    json doc = one_op(gather(1, 1, 1));
    doc["seed"] = "7";
    CHECK_THAT(parse_error_of(doc), Contains("w.json: seed: expected an integer in [0, 9223372036854775807], found \"7\""));
  }
  SECTION("the index file as a number") {
    json op = gather(1, 1, 1);
    op["indices"] = {{"file", 3}};
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].indices.file: expected a non-empty string, found 3"));
  }
}

TEST_CASE("workload errors: missing and empty values", "[workload][errors][unit]") {
  SECTION("no name") {
    CHECK_THAT(parse_error_of({{"ops", json::array({gather(1, 1, 1)})}}),
               Contains("w.json: name: expected this key (it is required), found nothing"));
  }
  SECTION("no ops") {
    CHECK_THAT(parse_error_of({{"name", "w"}}), Contains("w.json: ops: expected an \"ops\" array, a \"graph\" with a \"model\", or both, found neither"));
  }
  SECTION("empty ops") {
    CHECK_THAT(parse_error_of({{"name", "w"}, {"ops", json::array()}}),
               Contains("w.json: ops: expected a non-empty array, found an array of 0"));
  }
  SECTION("a size missing") {
    json op = gather(1, 1, 1);
    op.erase("num_features");
    CHECK_THAT(parse_error_of(one_op(op)),
               Contains("w.json: ops[0].num_features: expected this key (it is required), found nothing"));
  }
  SECTION("no op kind") {
    json op = gather(1, 1, 1);
    op.erase("op");
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].op: expected this key (it is required), found nothing"));
  }
  SECTION("an empty indices object") {
    json op = gather(1, 1, 1);
    op["indices"] = json::object();
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].indices: expected \"uniform\", \"sorted\""));
    CHECK_THAT(parse_error_of(one_op(op)), Contains("found an object"));
  }
  SECTION("both a distribution and a file") {
    json op = gather(1, 1, 1);
    op["indices"] = {{"distribution", "sorted"}, {"file", "x.txt"}};
    CHECK_THAT(parse_error_of(one_op(op)),
               Contains("w.json: ops[0].indices: expected either \"distribution\" or \"file\", found both"));
  }
}

TEST_CASE("workload errors: zero, negative and too large sizes", "[workload][errors][unit]") {
  SECTION("zero") {
    CHECK_THAT(parse_error_of(one_op(gather(0, 1, 1))),
               Contains("w.json: ops[0].num_inputs: expected a positive integer, found 0"));
  }
  SECTION("negative") {
    json doc = {{"name", "w"}, {"ops", json::array({gather(1, 1, 1), scatter_add(1, -3, 1)})}};
    CHECK_THAT(parse_error_of(doc), Contains("w.json: ops[1].num_features: expected a positive integer, found -3"));
  }
  SECTION("negative, written as a float") {
    json op = gather(1, 1, 1);
    op["num_outputs"] = -2.0;
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].num_outputs: expected a positive integer, found -2.0"));
  }
  SECTION("beyond int32") {
    CHECK_THAT(parse_error_of(one_op(scatter_add(1, 1, 2147483648))),
               Contains("w.json: ops[0].num_outputs: expected a positive integer at most 2147483647 (sizes must fit "
                        "int32, tilesim's index type), found 2147483648"));
  }
  SECTION("beyond int64: the int32 bound, not int64's, is quoted") {
    json op = gather(1, 1, 1);
    op["num_inputs"] = 18446744073709551615ull;
    CHECK_THAT(parse_error_of(one_op(op)),
               Contains("w.json: ops[0].num_inputs: expected a positive integer at most 2147483647 (sizes must fit int32, "
                        "tilesim's index type), found 18446744073709551615"));
    op["num_inputs"] = 1e19;
    CHECK_THAT(parse_error_of(one_op(op)), Contains("expected a positive integer at most 2147483647 (sizes must fit int32, "
                                                    "tilesim's index type), found 1e+19"));
  }
  SECTION("2^63 written as a float, which does not convert to int64") {
    json doc = one_op(gather(1, 1, 1));
    doc["seed"] = 9223372036854775808.0;
    CHECK_THAT(parse_error_of(doc),
               Contains("w.json: seed: expected an integer in [0, 9223372036854775807], found 9.223372036854776e+18"));
    doc = one_op(gather(1, 1, 1));
    doc["ops"][0]["num_inputs"] = 9223372036854775808.0;
    CHECK_THAT(parse_error_of(doc), Contains("w.json: ops[0].num_inputs: expected a positive integer at most 2147483647 "
                                             "(sizes must fit int32, tilesim's index type), found 9.223372036854776e+18"));
  }
  SECTION("a negative seed") {
    json doc = one_op(gather(1, 1, 1));
    doc["seed"] = -1;
    CHECK_THAT(parse_error_of(doc), Contains("w.json: seed: expected an integer in [0, 9223372036854775807], found -1"));
  }
}

TEST_CASE("workload errors: tensors too large for this host", "[workload][errors][unit]") {
  SECTION("one op, beyond any memory") {
    const std::string message = parse_error_of(one_op(gather(2147483647, 2147483647, 1)));
    CHECK_THAT(message, Contains("w.json: ops[0]: expected tensors (input + indices + output) of at most " +
                                 std::to_string(half_host_memory()) + " bytes"));
    CHECK_THAT(message, Contains("half of this host's physical memory, found more than 2^63 bytes needed"));
  }
  SECTION("one op, a little over half of memory") {
    // Output rows of 1 MiB; enough of them to pass half of physical memory by a few rows.
    const std::int64_t row_bytes = std::int64_t{1} << 20;
    const std::int64_t rows = half_host_memory() / row_bytes + 2;
    const std::string message = parse_error_of(one_op(gather(1, row_bytes / 4, rows)));
    const std::int64_t needed = row_bytes + rows * 4 + rows * row_bytes;
    CHECK_THAT(message, Contains("w.json: ops[0]: expected tensors"));
    CHECK_THAT(message, Contains("found " + std::to_string(needed) + " bytes"));
    CHECK_THAT(message, Contains("output " + std::to_string(rows * row_bytes) + " bytes"));
  }
  SECTION("ops that fit alone but not together") {
    const std::int64_t row_bytes = std::int64_t{1} << 20;
    const std::int64_t rows = half_host_memory() * 6 / 10 / row_bytes;  // 30% of memory each
    json doc = {{"name", "w"}, {"ops", json::array({gather(1, row_bytes / 4, rows), gather(1, row_bytes / 4, rows)})}};
    const std::string message = parse_error_of(doc);
    CHECK_THAT(message, Contains("w.json: ops[1]: expected the tensors of all ops together to need at most"));
    CHECK_THAT(message, Contains("needed by ops[0] to ops[1]"));
  }
}

TEST_CASE("workload errors: unknown op and unsupported dtypes", "[workload][errors][unit]") {
  SECTION("unknown op") {
    json op = gather(1, 1, 1);
    op["op"] = "scatter_max";
    CHECK_THAT(parse_error_of(one_op(op)),
               Contains("w.json: ops[0].op: expected one of \"gather\", \"scatter_add\", \"schnet_block\", found \"scatter_max\""));
  }
  SECTION("a dtype not implemented yet") {
    for (const char* dtype : {"float64", "int8", "int32"}) {
      json op = gather(1, 1, 1);
      op["dtype"] = dtype;
      CHECK_THAT(parse_error_of(one_op(op)),
                 Contains(std::string("w.json: ops[0].dtype: expected \"float32\", \"float16\" or \"bfloat16\" (the value dtypes "
                                      "implemented so far; ") +
                          dtype + " is not implemented yet), found \"" + dtype + "\""));
    }
  }
  SECTION("an unknown dtype") {
    json op = gather(1, 1, 1);
    op["dtype"] = "floaty";
    CHECK_THAT(parse_error_of(one_op(op)),
               Contains("w.json: ops[0].dtype: expected \"float32\", \"float16\" or \"bfloat16\" (a value dtype), found \"floaty\""));
  }
  SECTION("a dtype that is not a string") {
    json op = gather(1, 1, 1);
    op["dtype"] = 32;
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].dtype: expected \"float32\""));
    CHECK_THAT(parse_error_of(one_op(op)), Contains("found 32"));
  }
  SECTION("an unknown distribution") {
    json op = gather(1, 1, 1);
    op["indices"] = "random";
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].indices: expected \"uniform\", \"sorted\""));
    op["indices"] = {{"distribution", "power_law"}};
    CHECK_THAT(parse_error_of(one_op(op)),
               Contains("w.json: ops[0].indices.distribution: expected one of \"uniform\", \"sorted\", found \"power_law\""));
  }
}

TEST_CASE("workload errors: names", "[workload][errors][unit]") {
  SECTION("duplicate op names") {
    json doc = {{"name", "w"}, {"ops", json::array({gather(1, 1, 1), scatter_add(1, 1, 1), gather(1, 1, 1)})}};
    doc["ops"][0]["name"] = "g";
    doc["ops"][2]["name"] = "g";
    CHECK_THAT(parse_error_of(doc),
               Contains("w.json: ops[2].name: expected an op name not used by another op, found \"g\", already the name of ops[0]"));
  }
  SECTION("a default name taken by another op") {
    json doc = {{"name", "w"}, {"ops", json::array({gather(1, 1, 1), gather(1, 1, 1)})}};
    doc["ops"][0]["name"] = "gather_1";
    CHECK_THAT(parse_error_of(doc), Contains("w.json: ops[1]: expected an op name not used by another op, found the default "
                                             "name \"gather_1\", already the name of ops[0]"));
  }
  SECTION("bad characters in the workload name") {
    for (const char* name : {"my run", "../escape", "a/b", "..", "naïve"}) {
      json doc = one_op(gather(1, 1, 1));
      doc["name"] = name;
      const std::string message = parse_error_of(doc);
      CHECK_THAT(message, Contains("w.json: name: expected a name of 1 to 255 letters, digits, '.', '_' or '-'"));
      CHECK_THAT(message, Contains("found " + json(name).dump()));
    }
  }
  SECTION("bad characters in an op name") {
    json op = gather(1, 1, 1);
    op["name"] = "layer 1";
    CHECK_THAT(parse_error_of(one_op(op)), Contains("w.json: ops[0].name: expected a name of 1 to 255 letters"));
    CHECK_THAT(parse_error_of(one_op(op)), Contains("found \"layer 1\""));
  }
  SECTION("an empty name") {
    json doc = one_op(gather(1, 1, 1));
    doc["name"] = "";
    CHECK_THAT(parse_error_of(doc), Contains("w.json: name: expected a non-empty string, found \"\""));
  }
}

TEST_CASE("workload errors: index files", "[workload][errors][unit]") {
  TempDir dir;
  const std::string workload_file = dir.path("w.json");
  auto error_for = [&](const std::string& text, json op) {
    const std::string index_file = dir.write("idx.txt", text);
    op["indices"] = {{"file", "idx.txt"}};
    json doc = {{"name", "w"}, {"ops", json::array({gather(1, 1, 1), op})}};
    return std::make_pair(required_input_error_of([&] { parse_workload(doc, workload_file); }), index_file);
  };
  const std::string prefix = workload_file + ": ops[1].indices.file: ";

  SECTION("missing file") {
    json op = gather(4, 1, 2);
    op["indices"] = {{"file", "nope.txt"}};
    json doc = {{"name", "w"}, {"ops", json::array({gather(1, 1, 1), op})}};
    const std::string message = required_input_error_of([&] { parse_workload(doc, workload_file); });
    CHECK_THAT(message, Contains(prefix + "expected an index file, found no file \"" + dir.path("nope.txt") + "\""));
  }
  SECTION("a folder") {
    fs::create_directories(dir.path("folder"));
    json op = gather(4, 1, 2);
    op["indices"] = {{"file", "folder"}};
    const std::string message = required_input_error_of([&] { parse_workload(one_op(op), workload_file); });
    CHECK_THAT(message, Contains("ops[0].indices.file: expected an index file, found \"" + dir.path("folder") +
                                 "\", which is a directory"));
  }
  SECTION("a device, which would be read without end") {
    json op = gather(4, 1, 2);
    op["indices"] = {{"file", "/dev/zero"}};
    const std::string message = required_input_error_of([&] { parse_workload(one_op(op), workload_file); });
    CHECK_THAT(message, Contains("ops[0].indices.file: expected an index file, found \"/dev/zero\", which is not a regular file"));
  }
  SECTION("malformed line") {
    const auto [message, index_file] = error_for("1\n# ok\n2x\n0\n", gather(4, 1, 3));
    CHECK_THAT(message, Contains(prefix + "expected one integer per line, found \"2x\" at " + index_file + ":3"));
  }
  SECTION("a fractional index") {
    const auto [message, index_file] = error_for("1\n1.0\n", gather(4, 1, 2));
    CHECK_THAT(message, Contains(prefix + "expected one integer per line, found \"1.0\" at " + index_file + ":2"));
  }
  SECTION("two indices on a line") {
    const auto [message, index_file] = error_for("1 2\n", gather(4, 1, 2));
    CHECK_THAT(message, Contains(prefix + "expected one integer per line, found \"1 2\" at " + index_file + ":1"));
  }
  SECTION("out of range for a gather: [0, num_inputs)") {
    const auto [message, index_file] = error_for("0\n4\n", gather(4, 1, 2));
    CHECK_THAT(message, Contains(prefix + "expected an index in [0, 4) on each line, found 4 at " + index_file + ":2"));
  }
  SECTION("out of range for a scatter_add: [0, num_outputs)") {
    const auto [message, index_file] = error_for("0\n1\n\n7\n", scatter_add(3, 1, 7));
    CHECK_THAT(message, Contains(prefix + "expected an index in [0, 7) on each line, found 7 at " + index_file + ":4"));
  }
  SECTION("negative") {
    const auto [message, index_file] = error_for("-1\n", gather(4, 1, 1));
    CHECK_THAT(message, Contains(prefix + "expected an index in [0, 4) on each line, found -1 at " + index_file + ":1"));
  }
  SECTION("beyond int64") {
    const auto [message, index_file] = error_for("99999999999999999999\n", gather(4, 1, 1));
    CHECK_THAT(message, Contains(prefix + "expected an index in [0, 4) on each line, found 99999999999999999999 at " +
                                 index_file + ":1"));
  }
  SECTION("too few") {
    const auto [message, index_file] = error_for("0\n1\n", gather(4, 1, 3));
    CHECK_THAT(message, Contains(prefix + "expected 3 indices (one per line), found 2 in " + index_file));
  }
  SECTION("too many") {
    const auto [message, index_file] = error_for("0\n1\n2\n3\n", scatter_add(3, 1, 4));
    CHECK_THAT(message, Contains(prefix + "expected 3 indices (one per line), found more: index number 4 at " +
                                 index_file + ":4"));
  }
  SECTION("empty") {
    const auto [message, index_file] = error_for("# nothing\n", gather(4, 1, 1));
    CHECK_THAT(message, Contains(prefix + "expected 1 index (one per line), found 0 in " + index_file));
  }
  SECTION("changed between parse and instantiate") {
    dir.write("idx.txt", "0\n");
    json op = gather(4, 1, 1);
    op["indices"] = {{"file", "idx.txt"}};
    const Workload w = parse_workload(one_op(op), workload_file);
    dir.write("idx.txt", "9\n");
    CHECK_THAT(required_input_error_of([&] { instantiate(w); }),
               Contains(workload_file + ": ops[0].indices.file: expected an index in [0, 4) on each line, found 9"));
  }
}

TEST_CASE("workload errors: files that are not JSON", "[workload][errors][unit]") {
  TempDir dir;
  SECTION("a syntax error names line and column") {
    const std::string path = dir.write("bad.json", "{\n  \"name\": \"x\",\n  \"ops\": [,]\n}\n");
    const std::string message = required_input_error_of([&] { load_workload(path); });
    CHECK_THAT(message, Contains(path + ":3:11: expected valid JSON, found syntax error"));
  }
  SECTION("a missing workload file") {
    const std::string path = dir.path("absent.json");
    CHECK_THAT(required_input_error_of([&] { load_workload(path); }),
               Contains(path + ": expected a readable JSON file, found no such file"));
  }
  SECTION("a valid file with a bad value names the file") {
    const std::string path = dir.write("neg.json", one_op(gather(1, -3, 1)).dump(2));
    CHECK_THAT(required_input_error_of([&] { load_workload(path); }),
               Contains(path + ": ops[0].num_features: expected a positive integer, found -3"));
  }
}
