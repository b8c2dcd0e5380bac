// The workload layer: the examples, defaults, generated values and index files. Every input error users
// can make is in workload_errors_test.cpp.
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
#include "tests/support/workload_json.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace tilesim;
using namespace tilesim::workloads;

namespace {

// A fresh folder per test, removed afterwards; the pid keeps tests that CTest runs in parallel apart.
using tilesim_test::TempDir;

using tilesim_test::workload_json::gather;
using tilesim_test::workload_json::one_op;
using tilesim_test::workload_json::scatter_add;

std::string examples_dir() { return std::string(TILESIM_SOURCE_DIR) + "/workloads/examples"; }

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
                                          "gat_cora_train.json", "film_molecules_train.json"};
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
