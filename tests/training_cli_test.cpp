// `tilesim run` on a training workload: the loss of every step in report.json and on the terminal, the
// step split by phase, --steps, the GPU model's modeled steps beside the CPU's, and backends that do not
// run training steps refused before any work.
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

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

TEST_CASE("run: training refuses backends that do not run it, and --steps without a train section", "[training][cli]") {
  TempDir dir("train-cli-bad");
  auto r = run_tilesim("run workloads/examples/gcn_cora_train.json --backends cpu,ipu:bow --out " + dir.path("o"), dir.dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("ipu:bow") && Contains("training"));
  CHECK_FALSE(std::ifstream(dir.path("o/report.json")).good());
  r = run_tilesim("run workloads/examples/gcn_cora.json --backends cpu --steps 3 --out " + dir.path("o"), dir.dir());
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
