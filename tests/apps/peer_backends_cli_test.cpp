// The peer backends through the tilesim command: torch-cpu and cuda are listed by --version, run (or
// refuse to, with exit 2 and a message saying why) like any backend, and their names are parsed
// strictly. Built with or without libtorch and nvcc, and with or without a GPU, these hold.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

namespace fs = std::filesystem;

namespace {

using PeerResult = tilesim_test::CliResult;

const fs::path& peer_dir() {
  static const fs::path dir = tilesim_test::scratch("peer_cli");
  return dir;
}

PeerResult run_peer_cli(const std::string& args) { return tilesim_test::run_tilesim(args, peer_dir()); }

std::string small_workload() {
  const fs::path p = peer_dir() / "peer_small.json";
  std::ofstream(p) << R"({"name": "peer_small", "seed": 5, "ops": [
    {"op": "gather", "num_inputs": 200, "num_features": 24, "num_outputs": 3000},
    {"op": "scatter_add", "num_inputs": 3000, "num_features": 24, "num_outputs": 500}]})";
  return p.string();
}

}  // namespace

TEST_CASE("tilesim --version lists torch-cpu and cuda and whether each is built in", "[cli][peers]") {
  const PeerResult r = run_peer_cli("--version");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("torch-cpu (measured, "));
  CHECK_THAT(r.out, Catch::Contains("cuda (measured, "));
}

TEST_CASE("tilesim run --backends cpu,torch-cpu: verified, agreeing outputs, or exit 2 saying libtorch is not built in", "[cli][peers][slow]") {
  const bool built = run_peer_cli("--version").out.find("torch-cpu (measured, libtorch") != std::string::npos;
  const PeerResult r = run_peer_cli("run " + small_workload() + " --backends cpu,torch-cpu --repeats 2 --warmup 1 --json --out " +
                           (peer_dir() / "torch_out").string());
  if (!built) {
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("built without libtorch") && Catch::Contains("libtorch-dev"));
    return;
  }
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out);
  REQUIRE(report.at("results").size() == 2);
  const auto& torch_result = report.at("results").at(1);
  CHECK(torch_result.at("backend") == "torch-cpu");
  CHECK(torch_result.at("kind") == "measured");
  CHECK(torch_result.at("host").at("aten_threads") == torch_result.at("host").at("omp_max_threads"));
  for (const auto& op : torch_result.at("ops")) CHECK(op.at("verified") == true);
  REQUIRE(report.at("agreement").size() == 2);
  for (const auto& a : report.at("agreement")) CHECK(a.at("outputs_equal") == true);
}

TEST_CASE("tilesim run --backends cuda runs on a GPU, or exits 2 saying there is none or that CUDA is not built in", "[cli][peers]") {
  const PeerResult r = run_peer_cli("run " + small_workload() + " --backends cuda --repeats 2 --json --out " + (peer_dir() / "cuda_out").string());
  if (r.exit_code == 0) {  // a machine with a GPU
    const auto report = nlohmann::json::parse(r.out);
    for (const auto& op : report.at("results").at(0).at("ops")) CHECK(op.at("verified") == true);
    return;
  }
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("backend cuda: no CUDA device present") || Catch::Contains("built without its CUDA kernels"));
  CHECK_THAT(r.err, Catch::Contains("gpu-model"));
}

TEST_CASE("tilesim --backends parses the peer backends' names strictly", "[cli][peers]") {
  const std::string w = small_workload();
  for (const char* bad : {"cuda:fast", "torch-cpu:x", "cuda:"}) {
    INFO(bad);
    const PeerResult r = run_peer_cli("run " + w + " --backends " + bad + " --out " + (peer_dir() / "bad_out").string());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--backends"));
  }
  const PeerResult twice = run_peer_cli("run " + w + " --backends cuda,cuda:kernel --out " + (peer_dir() / "bad_out").string());
  CHECK(twice.exit_code == 2);
  CHECK_THAT(twice.err, Catch::Contains("\"cuda\" twice"));
}

TEST_CASE("tilesim run trains on cpu and torch-cpu: three losses each, agreeing curves, torch's step split by phase, or exit 2 "
          "saying libtorch is not built in",
          "[cli][peers][training][slow]") {
  const bool built = run_peer_cli("--version").out.find("torch-cpu (measured, libtorch") != std::string::npos;
  const fs::path out = peer_dir() / "train_out";
  const PeerResult r = run_peer_cli("run workloads/examples/gcn_cora_train.json --backends cpu,torch-cpu --steps 3 --warmup 0 --repeats 1 --out " +
                           out.string());
  if (!built) {
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("built without libtorch"));
    return;
  }
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("torch.backward (autograd)"));
  std::ifstream file(out / "report.json");
  REQUIRE(file.good());
  const auto report = nlohmann::json::parse(file);
  REQUIRE(report.at("results").size() == 2);
  for (const auto& backend : report.at("results")) {
    INFO(backend.at("backend"));
    const auto& training = backend.at("training");
    REQUIRE(training.at("loss").size() == 3);
    CHECK(training.at("all_steps_verified") == true);
    CHECK(training.at("loss").at(2).get<double>() < training.at("loss").at(0).get<double>());
    for (const char* phase : {"forward_s", "loss_s", "backward_s", "optimizer_s"}) CHECK(training.at("last_step").at(phase).get<double>() > 0);
  }
  const auto& torch_rows = report.at("results").at(1).at("ops");
  REQUIRE(torch_rows.size() == 4);
  CHECK(torch_rows.at(2).at("phase") == "backward");
  CHECK(torch_rows.at(2).at("op_kind") == "phase");
  // Per-layer totals need per-op rows: the cpu backend has them, torch-cpu's phase rows do not.
  CHECK_FALSE(report.at("results").at(0).at("groups").empty());
  CHECK(report.at("results").at(1).at("groups").empty());
  REQUIRE(report.at("loss_agreement").size() == 1);
  CHECK(report.at("loss_agreement").at(0).at("first_step_equal") == true);
    CHECK(report.at("loss_agreement").at(0).at("every_step_equal") == true);
  CHECK(report.at("loss_agreement").at(0).at("backends") == nlohmann::json::array({"cpu", "torch-cpu"}));
  // The ops both computed (forward outputs, the loss, the gradients and the updates) agree.
  std::size_t compared = 0;
  for (const auto& a : report.at("agreement")) {
    INFO(a.at("op") << ": " << a.at("detail"));
    CHECK(a.at("outputs_equal") == true);
    compared += a.at("op").get<std::string>().find(".step") != std::string::npos ? 1 : 0;
  }
  CHECK(compared == 4);  // each GCN layer's weight and bias update
}
