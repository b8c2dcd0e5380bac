// `tilesim run` on a training workload: the loss of every step in report.json and on the terminal, the
// step split by phase, --steps, and backends that do not run training steps refused before any work.
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
  auto r = run_tilesim("run workloads/examples/gcn_cora_train.json --backends cpu,gpu-model:a100-40gb --out " + dir.path("o"), dir.dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("gpu-model") && Contains("training"));
  CHECK_FALSE(std::ifstream(dir.path("o/report.json")).good());
  r = run_tilesim("run workloads/examples/gcn_cora.json --backends cpu --steps 3 --out " + dir.path("o"), dir.dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--steps") || Contains("train"));
  r = run_tilesim("run workloads/examples/gcn_cora_train.json --backends cpu --steps 0 --out " + dir.path("o"), dir.dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--steps"));
}
