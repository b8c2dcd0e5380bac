// `tilesim sweep` on workload sweep files (docs/sweep-format.md, "Workload sweeps"): the shipped
// width-by-depth GCN sweep (one row per point and backend, the axis columns filled, the simulated IPU's
// time growing with the width), training steps and parallel steps as points, and bad points refused
// before any row is written.
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "analysis/results_table.hpp"
#include "tests/support/test_support.hpp"

using Catch::Matchers::Contains;

namespace {

// results.csv as rows of cells by column name, and its header.
struct WsweepTable {
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
};

WsweepTable wsweep_read_table(const std::string& path) {
  WsweepTable t;
  std::istringstream in(tilesim_test::slurp(path));
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const auto cells = tilesim::analysis::split_csv_record(line, path, n);
    if (t.header.empty()) {
      t.header = cells;
      continue;
    }
    REQUIRE(cells.size() == t.header.size());
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < cells.size(); ++i) row[t.header[i]] = cells[i];
    t.rows.push_back(row);
  }
  return t;
}

// Two GCN layers on a small random graph (the scaling tests' shape), optionally with a train section
// and a parallel one.
nlohmann::json wsweep_small_gcn(const std::string& name) {
  return {{"name", name},
          {"seed", 3},
          {"graph", {{"generator", "erdos_renyi"}, {"num_nodes", 512}, {"num_edges", 4096}}},
          {"num_features", 16},
          {"model", nlohmann::json::array({{{"layer", "gcn"}, {"name", "a"}, {"out", 16}, {"activation", "relu"}},
                                           {{"layer", "gcn"}, {"name", "b"}, {"out", 16}}})}};
}

}  // namespace

TEST_CASE("sweep: the shipped GCN width-by-depth sweep, one row per point and backend, IPU time growing with width",
          "[sweep][cli][slow]") {
  tilesim_test::TempDir dir("wsweep-shipped");
  const auto r = tilesim_test::run_tilesim("sweep workloads/sweeps/gcn_cora_width_depth.json --out " + dir.path("out"), dir.dir());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("6 points") && Contains("model[*].out {16, 32, 64}"));
  const WsweepTable t = wsweep_read_table(dir.path("out/results.csv"));
  // The batch-size sweep's columns first, one per axis (by path, in name order), status last.
  REQUIRE(t.header.size() >= 4);
  CHECK(t.header[0] == "workload");
  CHECK(t.header[2] == "batch_size");
  CHECK(std::vector<std::string>(t.header.end() - 4, t.header.end()) ==
        std::vector<std::string>{"model", "model[*].out", "name", "status"});
  REQUIRE(t.rows.size() == 12);  // 2 depths x 3 widths x 2 backends
  std::map<std::string, std::map<std::string, std::vector<double>>> ipu_time;  // depth name -> widths' times
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    INFO("row " << i);
    CHECK(row.at("point") == std::to_string(i / 2));
    CHECK(row.at("backend") == (i % 2 == 0 ? "ipu:bow" : "gpu-model:a100-40gb:eager"));
    CHECK(row.at("status") == "ok");
    CHECK(row.at("run") == "forward");
    // The zipped name is the workload's.
    CHECK(row.at("workload") == row.at("name"));
    CHECK(row.at("name") == (i < 6 ? "gcn_cora_2_layers" : "gcn_cora_3_layers"));
    CHECK(row.at("model[*].out") == std::vector<std::string>{"16", "32", "64"}[(i / 2) % 3]);
    CHECK(row.at("model").rfind("[{", 0) == 0);
    CHECK(row.at("knob").empty());
    CHECK(row.at("batch_size").empty());
    CHECK(std::stod(row.at("total_time_s")) > 0);
    CHECK(row.at("step_median_s") == row.at("total_time_s"));
    CHECK(row.at("machine_hash").rfind("sha256:", 0) == 0);
    if (row.at("backend") == "ipu:bow") {
      CHECK(row.at("kind") == "simulated");
      CHECK(row.at("verified") == "timing-only");
      CHECK(std::stoll(row.at("cycles")) > 0);
      CHECK(std::stoll(row.at("peak_tile_bytes")) > 0);
      ipu_time[row.at("name")]["t"].push_back(std::stod(row.at("total_time_s")));
    } else {
      CHECK(row.at("kind") == "modeled");
      CHECK(row.at("verified") == "modeled");
      CHECK(row.at("cycles").empty());
    }
  }
  for (const auto& [depth, times] : ipu_time) {
    INFO(depth);
    const std::vector<double>& v = times.at("t");
    REQUIRE(v.size() == 3);
    CHECK(v[0] < v[1]);
    CHECK(v[1] < v[2]);
  }
  // A third layer costs time at every width.
  for (std::size_t w = 0; w < 3; ++w) CHECK(ipu_time["gcn_cora_3_layers"]["t"][w] > ipu_time["gcn_cora_2_layers"]["t"][w]);
  const nlohmann::json echo = nlohmann::json::parse(tilesim_test::slurp(dir.path("out/sweep.json")));
  CHECK(echo["points"] == 6);
  CHECK(echo["zip"] == nlohmann::json::array({nlohmann::json::array({"model", "name"})}));
}

TEST_CASE("sweep: training steps and parallel steps as points, their own columns filled", "[sweep][cli]") {
  tilesim_test::TempDir dir("wsweep-train-parallel");
  nlohmann::json train = wsweep_small_gcn("gcn_train");
  train["train"] = {{"task", "node"}, {"loss", "cross_entropy"}, {"optimizer", {{"kind", "adam"}, {"lr", 0.01}}}};
  const nlohmann::json train_sweep = {{"name", "lr_steps"},
                                      {"workload", train},
                                      {"axes", {{"train.optimizer.lr", {0.01, 0.1}}, {"train.steps", {1, 3}}}},
                                      {"backends", {"gpu-model:a100-40gb:eager"}}};
  auto r = tilesim_test::run_tilesim("sweep " + dir.write("train.json", train_sweep.dump()) + " --out " + dir.path("train"), dir.dir());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  WsweepTable t = wsweep_read_table(dir.path("train/results.csv"));
  REQUIRE(t.rows.size() == 4);
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    INFO("row " << i);
    CHECK(row.at("run") == "training");
    CHECK(row.at("train.optimizer.lr") == (i < 2 ? "0.01" : "0.1"));
    CHECK(row.at("train.steps") == (i % 2 == 0 ? "1" : "3"));
    CHECK(row.at("steps") == row.at("train.steps"));
    const double median = std::stod(row.at("step_median_s"));
    CHECK(median > 0);
    // The model's steps repeat: the run's time is its steps' times added.
    CHECK(std::stod(row.at("total_time_s")) == Approx(median * std::stod(row.at("steps"))));
    CHECK(row.at("final_loss").empty());  // a model computes no loss
    CHECK(row.at("verified") == "modeled");
  }

  nlohmann::json parallel = wsweep_small_gcn("gcn_replicas");
  parallel["parallel"] = {{"replicas", 1}};
  nlohmann::json parallel_sweep = {{"name", "replicas"},
                                   {"workload", parallel},
                                   {"axes", {{"parallel.replicas", {1, 2, 4}}}},
                                   {"backends", {"gpu-model:dgx-a100"}}};
  r = tilesim_test::run_tilesim("sweep " + dir.write("parallel.json", parallel_sweep.dump()) + " --out " + dir.path("parallel"), dir.dir());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  t = wsweep_read_table(dir.path("parallel/results.csv"));
  REQUIRE(t.rows.size() == 3);
  double last_throughput = 0;
  for (const auto& row : t.rows) {
    INFO(row.at("parallel.replicas"));
    CHECK(row.at("run") == "parallel");
    CHECK(row.at("devices") == row.at("parallel.replicas"));
    CHECK(row.at("throughput_unit") == "nodes_per_s");
    const double throughput = std::stod(row.at("throughput_per_s"));
    CHECK(throughput > last_throughput);  // each replica adds its copy of the graph's work
    last_throughput = throughput;
    CHECK(std::stod(row.at("compute_s")) > 0);
    CHECK_FALSE(row.at("scaling_efficiency").empty());
  }

  // More replicas than the DGX has GPUs: refused, naming the point, before any row.
  parallel_sweep["axes"]["parallel.replicas"] = {2, 16};
  r = tilesim_test::run_tilesim("sweep " + dir.write("big.json", parallel_sweep.dump()) + " --out " + dir.path("big"), dir.dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("big.json: point 2 of 2 (parallel.replicas=16): parallel: expected at most 8 devices (replicas x stages x "
                             "partitions) on gpu-model:dgx-a100, found 16"));
  CHECK_FALSE(tilesim_test::fs::exists(dir.path("big/results.csv")));
}

TEST_CASE("sweep: a bad point value is refused with the workload reader's message before any point runs", "[sweep][cli]") {
  tilesim_test::TempDir dir("wsweep-bad-point");
  const nlohmann::json sweep = {{"name", "bad"},
                                {"workload", wsweep_small_gcn("gcn_bad")},
                                {"axes", {{"model[*].out", {16, 0}}}},
                                {"backends", {"ipu:bow", "gpu-model:a100-40gb:eager"}}};
  const std::string file = dir.write("bad.json", sweep.dump());
  auto r = tilesim_test::run_tilesim("sweep " + file + " --out " + dir.path("out"), dir.dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("tilesim: error: " + file + ": point 2 of 2 (model[*].out=0): " + file +
                             ": model[0].out: expected a positive integer, found 0"));
  CHECK_FALSE(tilesim_test::fs::exists(dir.path("out")));  // nothing ran, nothing was written
  // A path into no part of the workload: the sweep file, the axis and the path.
  nlohmann::json lost = sweep;
  lost["axes"] = {{"train.optimizer.lr", {0.1}}};
  r = tilesim_test::run_tilesim("sweep " + dir.write("lost.json", lost.dump()) + " --out " + dir.path("out"), dir.dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("lost.json: axes[\"train.optimizer.lr\"]: expected a path into the workload") &&
                        Contains("found no \"train\" in the workload"));
  // Workload sweeps run in one process, one point after another.
  r = tilesim_test::run_tilesim("sweep " + file + " --jobs 2 --out " + dir.path("out"), dir.dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--jobs: expected 1 for a workload sweep"));
}
