// `tilesim run` on a training workload: the loss of every step in report.json and on the terminal, the
// step split by phase, --steps, the GPU model's modeled steps beside the CPU's, the simulated IPU's
// steps beside the CPU's (their loss curves agreeing) or refused when they do not fit, and --steps
// misused.
#include <algorithm>
#include <cmath>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

using json = nlohmann::json;
using Catch::Matchers::Contains;
using tilesim_test::run_tilesim;
using tilesim_test::TempDir;

TEST_CASE("run: a GCN training workload on the CPU reports a falling loss for every step", "[training][cli]") {
  TempDir dir("train-cli");
  const auto r = run_tilesim("run workloads/examples/gcn_cora_train.json --backends cpu --steps 4 --warmup 0 --repeats 1 --out " +
                                 dir.path("out"),
                             dir.dir());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("(loss)"));
  CHECK_THAT(r.out, Contains("backward"));
  const json report = json::parse(tilesim_test::slurp(dir.path("out/report.json")));
  CHECK(report["options"]["steps"] == 4);
  CHECK(report["workload"]["train"]["optimizer"]["kind"] == "adam");
  const json& t = report["results"][0]["training"];
  REQUIRE(t["loss"].size() == 4);
  CHECK(t["loss"][3].get<double>() < t["loss"][0].get<double>());
  CHECK(t["all_steps_verified"] == true);
  CHECK(t["per_step"].size() == 4);
  CHECK(t["last_step"]["backward_s"].get<double>() > 0);
  CHECK(t["last_step"]["optimizer_s"].get<double>() > 0);
  CHECK(t["backward_to_forward"].get<double>() > 0);
  bool backward_row = false;
  for (const json& row : report["results"][0]["ops"]) backward_row = backward_row || row["op"] == "conv1.lin.grad.weight";
  CHECK(backward_row);
}

TEST_CASE("run: --steps without a train section, and --steps 0", "[training][cli]") {
  TempDir dir("train-cli-bad");
  auto r = run_tilesim("run workloads/examples/gcn_cora.json --backends cpu --steps 3 --out " + dir.path("o"), dir.dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--steps") || Contains("train"));
  r = run_tilesim("run workloads/examples/gcn_cora_train.json --backends cpu --steps 0 --out " + dir.path("o"), dir.dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--steps"));
}

TEST_CASE("run: the GPU model predicts every op of a training step beside the CPU's measured one", "[training][gpu][cli]") {
  TempDir dir("train-cli-gpu");
  const auto r = run_tilesim("run workloads/examples/gcn_cora_train.json --backends cpu,gpu-model:a100-40gb --steps 2 --warmup 0 "
                             "--repeats 1 --out " + dir.path("out"),
                             dir.dir());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json report = json::parse(tilesim_test::slurp(dir.path("out/report.json")));
  REQUIRE(report["results"].size() == 2);
  const json& cpu = report["results"][0];
  const json& gpu = report["results"][1];
  CHECK(cpu["backend"] == "cpu");
  CHECK(gpu["backend"] == "gpu-model:a100-40gb");
  CHECK(gpu["kind"] == "modeled");
  REQUIRE(cpu.contains("training"));
  REQUIRE(gpu.contains("training"));
  CHECK(cpu["training"]["loss"][1].is_number());
  // The model computes no values: its losses are null, its steps repeat.
  const json& t = gpu["training"];
  REQUIRE(t["loss"].size() == 2);
  CHECK(t["loss"][0].is_null());
  CHECK(t["loss"][1].is_null());
  REQUIRE(t["per_step"].size() == 2);
  CHECK(t["per_step"][0]["time_s"] == t["per_step"][1]["time_s"]);
  const json& split = t["last_step"];
  CHECK(split["forward_s"].get<double>() > 0);
  CHECK(split["loss_s"].get<double>() > 0);
  CHECK(split["backward_s"].get<double>() > 0);
  CHECK(split["optimizer_s"].get<double>() > 0);
  CHECK(split["forward_s"].get<double>() + split["loss_s"].get<double>() + split["backward_s"].get<double>() +
            split["optimizer_s"].get<double>() ==
        Approx(t["per_step"][1]["time_s"].get<double>()));
  CHECK(t["backward_to_forward"].get<double>() > 0);
  // Every op of the step, the backward and optimizer ones included, has a modeled time and its kernels.
  REQUIRE(gpu["ops"].size() == cpu["ops"].size());
  bool weight_grad = false, step = false;
  for (const json& row : gpu["ops"]) {
    INFO(row["op"]);
    CHECK(row["time_s"].get<double>() > 0);
    CHECK(!row["plan"]["kernels"].empty());
    weight_grad = weight_grad || row["op"] == "conv1.lin.grad.weight";
    step = step || row["op_kind"] == "optimizer_step";
  }
  CHECK(weight_grad);
  CHECK(step);
  // With one backend computing losses there is nothing to compare: the pair says so rather than "equal".
  REQUIRE(report["loss_agreement"].size() == 1);
  CHECK(report["loss_agreement"][0]["compared_steps"] == 0);
  CHECK(report["loss_agreement"][0]["first_step_equal"].is_null());
  CHECK_THAT(r.out + r.err, Contains("gpu-model:a100-40gb: median step"));
}

TEST_CASE("run: a GCN training step on the simulated IPU and the CPU, the loss curves agreeing", "[training][cli][slow]") {
  TempDir dir("train-cli-ipu");
  const auto r = run_tilesim("run workloads/examples/gcn_cora_train.json --backends ipu,cpu --steps 3 --warmup 0 --repeats 1 --out " +
                                 dir.path("out"),
                             dir.dir());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("ipu:bow: median step") && Contains("backward/forward"));
  const json report = json::parse(tilesim_test::slurp(dir.path("out/report.json")));
  REQUIRE(report["results"].size() == 2);
  const json& ipu = report["results"][0];
  const json& cpu = report["results"][1];
  CHECK(ipu["backend"] == "ipu:bow");
  REQUIRE(ipu["training"]["loss"].size() == 3);
  CHECK(ipu["training"]["all_steps_verified"] == true);
  CHECK(ipu["training"]["loss"][2].get<double>() < ipu["training"]["loss"][0].get<double>());
  for (int s = 0; s < 3; ++s) {
    const double a = ipu["training"]["loss"][s].get<double>(), b = cpu["training"]["loss"][s].get<double>();
    CHECK(std::abs(a - b) <= 1e-4 * std::max(1.0, std::abs(a)));
  }
  REQUIRE(report["loss_agreement"].size() == 1);
  CHECK(report["loss_agreement"][0]["every_step_equal"] == true);
  // The step's split by phase and the backward-to-forward ratio, in simulated time.
  CHECK(ipu["training"]["last_step"]["backward_s"].get<double>() > 0);
  CHECK(ipu["training"]["last_step"]["optimizer_s"].get<double>() > 0);
  CHECK(ipu["training"]["backward_to_forward"].get<double>() > 0);
  // The SRAM with the step's live tensors, per op and at the busiest one.
  CHECK(ipu["host"]["peak_tile_bytes_with_live_tensors"].get<std::int64_t>() > 0);
  CHECK(ipu["host"]["peak_tile_bytes_with_live_tensors"].get<std::int64_t>() <= ipu["host"]["sram_bytes_per_tile"].get<std::int64_t>());
  for (const json& row : ipu["ops"]) CHECK(row["plan"]["tile_bytes_with_live_tensors"].get<std::int64_t>() >= row["plan"]["live_tile_bytes"].get<std::int64_t>());
}

TEST_CASE("run: a training step too large for one IPU exits 3 naming recompute", "[training][cli]") {
  TempDir dir("train-cli-ipu-big");
  // A 4-layer GAT whose forward ops each fit, but not with every layer's messages kept for the backward.
  json model = json::array();
  for (int l = 1; l <= 4; ++l)
    model.push_back({{"layer", "gat"}, {"name", "conv" + std::to_string(l)}, {"out", l == 1 ? 8 : l == 4 ? 4 : 32},
                     {"heads", l == 1 ? 4 : 1}, {"activation", "relu"}});
  const json w = {{"name", "deep_gat"},
                  {"seed", 1},
                  {"graph", {{"generator", "erdos_renyi"}, {"num_nodes", 20000}, {"num_edges", 700000}}},
                  {"num_features", 32},
                  {"model", model},
                  {"train", {{"task", "node"}, {"loss", "cross_entropy"}, {"optimizer", {{"kind", "adam"}}}}}};
  tilesim_test::write_text(dir.path("w.json"), w.dump());
  const auto r = run_tilesim("run " + dir.path("w.json") + " --backends ipu:bow --out " + dir.path("o"), dir.dir());
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.err, Contains("training step") && Contains("\"recompute\": true") && Contains("smaller batch") &&
                        Contains("ipu:bow-2000"));
  CHECK_FALSE(std::ifstream(dir.path("o/report.json")).good());
}

TEST_CASE("run: models alone read shapes only, so a model too big for this host runs on them and not on the CPU",
          "[training][gpu][cli]") {
  TempDir dir("shapes-only");
  // 4M nodes x 2048 features: 32 GiB of node features alone, over half of any host this runs on.
  const std::string w = dir.path("big.json");
  std::ofstream(w) << R"({"name": "big", "graph": {"generator": "erdos_renyi", "num_nodes": 4000000, "num_edges": 4000000},
    "num_features": 2048, "model": [{"layer": "gcn", "out": 16}]})";
  const auto gpu = run_tilesim("run " + w + " --backends gpu-model:a100-40gb:eager --out " + dir.path("gpu"), dir.dir());
  INFO(gpu.err);
  REQUIRE(gpu.exit_code == 0);
  const json report = json::parse(tilesim_test::slurp(dir.path("gpu/report.json")));
  CHECK(report["options"]["shapes_only"] == true);
  CHECK(report["results"][0]["time_s"].get<double>() > 0);
  const auto both = run_tilesim("run " + w + " --backends cpu,gpu-model:a100-40gb --out " + dir.path("both"), dir.dir());
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.err, Contains("half of this host's memory"));
}
