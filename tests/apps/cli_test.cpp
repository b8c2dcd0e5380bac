// The tilesim command end to end: exit codes, error messages that name the file and JSON path,
// report.json contents, traces, and that a failed run never clobbers an earlier report.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

namespace fs = std::filesystem;

namespace {

using tilesim_test::CliResult;
using tilesim_test::slurp;

fs::path cli_dir() {
  static const fs::path dir = tilesim_test::scratch("cli_test");
  return dir;
}

CliResult run_cli(const std::string& args) { return tilesim_test::run_tilesim(args, cli_dir()); }

fs::path write_cli_file(const std::string& name, const std::string& text) {
  return tilesim_test::write_text(cli_dir() / name, text);
}

std::string example(const std::string& name) { return std::string(TILESIM_SOURCE_DIR) + "/workloads/examples/" + name; }

const char* kSmall = R"({"name": "cli_small", "seed": 3, "ops": [
  {"op": "gather", "num_inputs": 64, "num_features": 16, "num_outputs": 300},
  {"op": "scatter_add", "num_inputs": 500, "num_features": 24, "num_outputs": 100}]})";

}  // namespace

TEST_CASE("tilesim --version, help and machines", "[cli]") {
  auto v = run_cli("--version");
  CHECK(v.exit_code == 0);
  CHECK_THAT(v.out, Catch::Contains("tilesim 0.1.0") && Catch::Contains("SystemC 2.3.4"));
  auto h = run_cli("help");
  CHECK(h.exit_code == 0);
  CHECK_THAT(h.out, Catch::Contains("run") && Catch::Contains("machines"));
  auto none = run_cli("");
  CHECK(none.exit_code == 2);
  auto m = run_cli("machines");
  CHECK(m.exit_code == 0);
  CHECK_THAT(m.out, Catch::Contains("ipu:bow") && Catch::Contains("ipu:mk2") && Catch::Contains("ipu:mk1") &&
                        Catch::Contains("1472") && Catch::Contains("1216") && Catch::Contains("1.85 GHz"));
  auto mj = run_cli("machines --json");
  CHECK(mj.exit_code == 0);
  int ipu_machines = 0;
  for (const auto& m : nlohmann::json::parse(mj.out)) ipu_machines += m["kind"] == "ipu" ? 1 : 0;
  CHECK(ipu_machines == 6);  // bow, mk2, mk1, the 4-IPU system bow-2000 and the Pods pod16 and pod64
  CHECK_THAT(m.out, Catch::Contains("ipu:bow-2000") && Catch::Contains("4 IPUs of 1472 tiles"));
}

TEST_CASE("tilesim run reports both backends verified, and writes report.json", "[cli]") {
  const auto w = write_cli_file("small.json", kSmall);
  const auto out = cli_dir() / "out_small";
  auto r = run_cli("run " + w.string() + " --json --repeats 3 --out " + out.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out);
  CHECK(report == nlohmann::json::parse(slurp(out / "report.json")));
  CHECK(report["tool"]["name"] == "tilesim");
  CHECK(report["workload"]["seed"] == 3);
  REQUIRE(report["results"].size() == 2);
  CHECK(report["results"][0]["backend"] == "ipu:bow");
  CHECK(report["results"][0]["kind"] == "simulated");
  CHECK(report["results"][1]["backend"] == "cpu");
  CHECK(report["results"][1]["kind"] == "measured");
  for (const auto& backend : report["results"]) {
    REQUIRE(backend["ops"].size() == 2);
    for (const auto& op : backend["ops"]) {
      CHECK(op["verified"] == true);
      CHECK(op["time_s"].get<double>() > 0);
    }
  }
  const auto& ipu_op = report["results"][0]["ops"][0];
  CHECK(ipu_op["cycles"].get<std::int64_t>() > 0);
  CHECK(ipu_op["time_s"].get<double>() == Approx(ipu_op["cycles"].get<double>() / 1.85e9));
  CHECK(ipu_op["peak_tile_bytes"].get<std::int64_t>() > 0);
  CHECK(report["results"][0]["host"]["simulated_cycles_per_s"].get<double>() > 0);
  REQUIRE(report["agreement"].size() == 2);
  for (const auto& a : report["agreement"]) CHECK(a["outputs_equal"] == true);

  // The table form names the report path.
  auto t = run_cli("run " + w.string() + " --repeats 2 --out " + out.string());
  CHECK(t.exit_code == 0);
  CHECK_THAT(t.out, Catch::Contains("ipu:bow") && Catch::Contains("cpu") && Catch::Contains("report: "));
}

// Every example runs on the simulated IPU (poplibs' dynamic gathers and scatters, and the static index
// mode that compiles a model's graph edges into the exchange), the CPU kernels and the GPU model, with
// every computed output verified (the model computes none). Three test cases (forward examples, training
// examples, the one that does not fit), so that a parallel run spreads them over the cores.
namespace {

const std::string kExampleOut = " --json --repeats 1 --warmup 0 --out ";

// The shipped single-step examples (workloads/examples/*.json, mini-batch ones aside: they run in
// tests/apps/minibatch_cli_test.cpp, and the dataset-sized ones build graphs of 10^8 edges, minutes and gigabytes:
// their runs are in the README and the docs), training ones or forward ones.
std::vector<fs::path> shipped_examples(bool training) {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(std::string(TILESIM_SOURCE_DIR) + "/workloads/examples")) {
    const auto name = entry.path().filename().string();
    if (entry.path().extension() != ".json" || name == "hydronet_largest.json" || name == "sage_arxiv.json") continue;
    if (nlohmann::json::parse(tilesim_test::slurp(entry.path())).contains("loader")) continue;
    if ((entry.path().stem().string().find("_train") != std::string::npos) == training) paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace

// The ogbn-arxiv-shaped GraphSAGE example does not fit one IPU (its 2.2M gathered 128-wide messages alone
// are 1.14 GB against Bow's 918 MB of tile SRAM): it must fail with exit 3 and say what to try next. Nor
// does its dynamic gather fit the 4-IPU Bow-2000 (the plans keep a whole column block of the 169343-row
// table on every tile of an index group, 1.35 MB at the finest column split, or the candidate rows of
// every row block), and that error must point at the static mode, which does fit: it runs here
// timing-only (a functional run takes 30 s and 9 GB of host memory, too much for the sanitizer build; its
// verified run is in the README).
TEST_CASE("the shipped arxiv example exits 3 where it does not fit and runs timing-only where it does", "[cli][slow]") {
  const std::string path = std::string(TILESIM_SOURCE_DIR) + "/workloads/examples/sage_arxiv.json";
  const std::string out = kExampleOut + (cli_dir() / "ex_arxiv").string();
  const auto ipu = run_cli("run " + path + " --backends ipu:bow:static" + out);
  CHECK(ipu.exit_code == 3);
  CHECK_THAT(ipu.err, Catch::Contains("bytes") && Catch::Contains("ipu:bow-2000 (4 IPUs)"));
  const auto system = run_cli("run " + path + " --backends ipu:bow-2000" + out);
  CHECK(system.exit_code == 3);
  CHECK_THAT(system.err, Catch::Contains("bow-2000") && Catch::Contains("bytes") && Catch::Contains("ipu:MACHINE:static"));
  const auto compiled = run_cli("run " + path + " --timing-only --backends ipu:bow-2000:static" + out);
  INFO(compiled.err);
  REQUIRE(compiled.exit_code == 0);
  const auto report = nlohmann::json::parse(compiled.out);
  std::size_t static_ops = 0;
  for (const auto& op : report["results"][0]["ops"]) {
    CHECK(op["cycles"].get<std::int64_t>() > 0);
    if (op["plan"].contains("indices")) {
      CHECK(op["plan"]["indices"].get<std::string>().rfind("static", 0) == 0);
      ++static_ops;
    }
  }
  CHECK(static_ops == 4);  // each layer's gather and mean aggregation
  const auto gpu = run_cli("run " + path + " --backends gpu-model:a100-40gb" + out);
  INFO(gpu.err);
  CHECK(gpu.exit_code == 0);
}

TEST_CASE("every shipped forward example runs with verified outputs", "[cli][slow]") {
  const auto examples = shipped_examples(false);
  REQUIRE(examples.size() >= 8);
  for (const auto& path : examples) {
    INFO(path);
    auto r = run_cli("run " + path.string() + " --backends ipu:bow,ipu:bow:static,cpu,gpu-model:a100-40gb" + kExampleOut +
                     (cli_dir() / "ex_forward").string());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto report = nlohmann::json::parse(r.out);
    REQUIRE(report["results"].size() == 4);
    for (const auto& backend : report["results"]) {
      INFO(backend["backend"]);
      const bool computes = backend["kind"] != "modeled";
      for (const auto& op : backend["ops"]) {
        if (computes)
          CHECK(op["verified"] == true);
        else
          CHECK(op["verified"].is_null());
      }
    }
  }
}

// Training steps on the simulated IPU, the CPU kernels and the GPU model (torch-cpu's and cuda's have
// their own tests). GraphSAGE on the PubMed-shaped graph does not fit one IPU with dynamic indices (its
// first aggregation of 500 features alone exceeds the tiles' SRAM): it exits 3 there, and trains on one
// IPU with its edges compiled into the exchange (ipu:bow:static).
TEST_CASE("every shipped training example runs two verified steps", "[cli][slow]") {
  const auto examples = shipped_examples(true);
  REQUIRE(examples.size() >= 5);
  for (const auto& path : examples) {
    INFO(path);
    const std::string out = kExampleOut + (cli_dir() / "ex_training").string();
    const bool fits_one_ipu = path.filename() != "sage_pubmed_train.json";
    if (!fits_one_ipu) {
      const auto ipu = run_cli("run " + path.string() + " --backends ipu:bow --steps 2" + out);
      CHECK(ipu.exit_code == 3);
      CHECK_THAT(ipu.err, Catch::Contains("bytes") && Catch::Contains("ipu:bow-2000 (4 IPUs)"));
    }
    const std::string backends =
        std::string(fits_one_ipu ? " --backends ipu:bow," : " --backends ipu:bow:static,") + "cpu,gpu-model:a100-40gb --steps 2";
    auto r = run_cli("run " + path.string() + backends + out);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto report = nlohmann::json::parse(r.out);
    REQUIRE(report["results"].size() == 3);
    for (const auto& backend : report["results"]) {
      INFO(backend["backend"]);
      REQUIRE(backend["training"]["loss"].size() == 2);
      if (backend["kind"] == "modeled") {
        CHECK(backend["training"]["loss"][0].is_null());  // modeled: no values
        CHECK(backend["training"]["last_step"]["backward_s"].get<double>() > 0);
        CHECK(backend["training"]["last_step"]["optimizer_s"].get<double>() > 0);
        for (const auto& op : backend["ops"]) {
          INFO(op["op"]);
          CHECK(op["time_s"].get<double>() > 0);
          CHECK(op["verified"].is_null());
        }
      } else {
        CHECK(backend["training"]["all_steps_verified"] == true);
        CHECK(backend["training"]["loss"][1].is_number());
      }
    }
    // The simulated IPU and the CPU start from the same inputs: their first losses agree.
    CHECK(report["loss_agreement"][0]["first_step_equal"] == true);
  }
}

TEST_CASE("timing-only runs give the same cycles and verify nothing", "[cli]") {
  const auto w = write_cli_file("small_t.json", kSmall);
  auto f = run_cli("run " + w.string() + " --json --backends ipu --out " + (cli_dir() / "tf").string());
  auto t = run_cli("run " + w.string() + " --json --backends ipu --timing-only --out " + (cli_dir() / "tt").string());
  REQUIRE(f.exit_code == 0);
  REQUIRE(t.exit_code == 0);
  const auto fj = nlohmann::json::parse(f.out), tj = nlohmann::json::parse(t.out);
  for (int k = 0; k < 2; ++k) {
    CHECK(fj["results"][0]["ops"][k]["cycles"] == tj["results"][0]["ops"][k]["cycles"]);
    CHECK(tj["results"][0]["ops"][k]["verified"].is_null());
  }
}

TEST_CASE("run with a trace file writes a Chrome trace with compute, sync and exchange phases", "[cli]") {
  const auto w = write_cli_file("small_tr.json", kSmall);
  const auto trace = cli_dir() / "trace.json";
  auto r = run_cli("run " + w.string() + " --backends ipu:bow --trace " + trace.string() + " --out " + (cli_dir() / "tr").string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(slurp(trace));
  REQUIRE(j["traceEvents"].is_array());
  std::set<std::string> categories;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X") {
      categories.insert(e["cat"].get<std::string>());
      CHECK(e["dur"].get<double>() >= 0);
    }
  }
  CHECK(categories == std::set<std::string>{"compute", "exchange", "sync"});
}

TEST_CASE("a seed given on the command line overrides the workload seed and changes the data", "[cli]") {
  const auto w = write_cli_file("small_s.json", kSmall);
  auto a = run_cli("run " + w.string() + " --json --backends ipu --seed 99 --out " + (cli_dir() / "s1").string());
  REQUIRE(a.exit_code == 0);
  CHECK(nlohmann::json::parse(a.out)["workload"]["seed"] == 99);
}

TEST_CASE("bad input exits with code 2 and names the file, the JSON path, expected and found", "[cli][errors][slow]") {
  struct Bad {
    const char* what;
    std::string workload;
    std::vector<std::string> message_parts;
  };
  const std::vector<Bad> bad = {
      {"unknown key", R"({"name": "b", "ops": [{"op": "gather", "num_inputs": 4, "num_features": 2, "num_outputs": 3, "colour": 1}]})",
       {"ops[0].colour", "unknown key"}},
      {"negative size", R"({"name": "b", "ops": [{"op": "gather", "num_inputs": 4, "num_features": 2, "num_outputs": 3},
         {"op": "scatter_add", "num_inputs": 4, "num_features": -3, "num_outputs": 3}]})",
       {"ops[1].num_features", "positive integer", "-3"}},
      {"zero size", R"({"name": "b", "ops": [{"op": "gather", "num_inputs": 0, "num_features": 2, "num_outputs": 3}]})",
       {"ops[0].num_inputs"}},
      {"wrong type", R"({"name": "b", "ops": [{"op": "gather", "num_inputs": "4", "num_features": 2, "num_outputs": 3}]})",
       {"ops[0].num_inputs", "\"4\""}},
      {"unsupported dtype", R"({"name": "b", "ops": [{"op": "gather", "num_inputs": 4, "num_features": 2, "num_outputs": 3, "dtype": "float64"}]})",
       {"ops[0].dtype", "float32", "float64"}},
      {"unknown op", R"({"name": "b", "ops": [{"op": "gatherr", "num_inputs": 4, "num_features": 2, "num_outputs": 3}]})",
       {"ops[0].op", "gatherr"}},
      {"tensors larger than memory", R"({"name": "b", "ops": [{"op": "gather", "num_inputs": 1000000000, "num_features": 100000, "num_outputs": 3}]})",
       {"ops[0]"}},
      {"syntax error", R"({"name": "b", "ops": [})", {"valid JSON"}},
  };
  for (const auto& b : bad) {
    INFO(b.what);
    const auto w = write_cli_file("bad.json", b.workload);
    auto r = run_cli("run " + w.string() + " --out " + (cli_dir() / "bad").string());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(w.string()));
    for (const auto& part : b.message_parts) CHECK_THAT(r.err, Catch::Contains(part));
  }
  // An index file with an out-of-range index names the index file and its line.
  write_cli_file("bad.indices.txt", "0\n1\n7\n");
  const auto w = write_cli_file("bad_idx.json", R"({"name": "b", "ops": [{"op": "gather", "num_inputs": 4, "num_features": 2,
      "num_outputs": 3, "indices": {"file": "bad.indices.txt"}}]})");
  auto r = run_cli("run " + w.string() + " --out " + (cli_dir() / "bad").string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("bad.indices.txt") && Catch::Contains("3"));

  // Usage errors.
  CHECK(run_cli("run").exit_code == 2);
  CHECK(run_cli("run " + example("small.json") + " --frobnicate").exit_code == 2);
  auto nofile = run_cli("run /nonexistent/w.json");
  CHECK(nofile.exit_code == 2);
  CHECK_THAT(nofile.err, Catch::Contains("/nonexistent/w.json"));
  auto backend = run_cli("run " + example("small.json") + " --backends ipu,gpu");
  CHECK(backend.exit_code == 2);
  CHECK_THAT(backend.err, Catch::Contains("--backends") && Catch::Contains("gpu"));
  auto machine = run_cli("run " + example("small.json") + " --backends ipu:bowx");
  CHECK(machine.exit_code == 2);
  CHECK_THAT(machine.err, Catch::Contains("bowx"));
  auto mode = run_cli("run " + example("small.json") + " --backends ipu:bow:statik");
  CHECK(mode.exit_code == 2);
  CHECK_THAT(mode.err, Catch::Contains("bow:statik"));
  // "ipu:static" is Bow in the static index mode, named in full in the report.
  auto both = run_cli("run " + example("small.json") + " --json --backends ipu:static,ipu --out " + (cli_dir() / "modes").string());
  REQUIRE(both.exit_code == 0);
  const auto modes = nlohmann::json::parse(both.out);
  CHECK(modes["results"][0]["backend"] == "ipu:bow:static");
  CHECK(modes["results"][1]["backend"] == "ipu:bow");
  const auto broken_machine = write_cli_file("broken_machine.json", R"({"name": "x"})");
  auto bm = run_cli("run " + example("small.json") + " --backends ipu:" + broken_machine.string());
  CHECK(bm.exit_code == 2);
  CHECK_THAT(bm.err, Catch::Contains(broken_machine.string()) && Catch::Contains("description"));
}

TEST_CASE("a workload too big for one IPU exits with code 3 naming the tile and bytes", "[cli][errors]") {
  const auto w = write_cli_file("huge.json", R"({"name": "huge", "ops": [
      {"op": "gather", "num_inputs": 300000, "num_features": 1024, "num_outputs": 64}]})");
  auto r = run_cli("run " + w.string() + " --backends ipu --out " + (cli_dir() / "huge").string());
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.err, Catch::Contains("tile 0") && Catch::Contains("bytes") && Catch::Contains("bow"));
}

TEST_CASE("a failed run leaves the earlier report intact", "[cli][errors]") {
  const auto out = cli_dir() / "keep";
  const auto good = write_cli_file("keep.json", kSmall);
  REQUIRE(run_cli("run " + good.string() + " --backends ipu --out " + out.string()).exit_code == 0);
  const std::string before = slurp(out / "report.json");
  REQUIRE(!before.empty());
  const auto bad = write_cli_file("keep_bad.json", R"({"name": "cli_small", "ops": [{"op": "gather"}]})");
  CHECK(run_cli("run " + bad.string() + " --out " + out.string()).exit_code == 2);
  const auto huge = write_cli_file("keep_huge.json", R"({"name": "cli_small", "ops": [
      {"op": "gather", "num_inputs": 300000, "num_features": 1024, "num_outputs": 64}]})");
  CHECK(run_cli("run " + huge.string() + " --backends ipu --out " + out.string()).exit_code == 3);
  CHECK(slurp(out / "report.json") == before);
}
