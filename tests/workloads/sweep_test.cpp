// Sweeps: the file format's validation (errors name the file and JSON path), the shipped hydronet grid,
// point seeds, and `tilesim sweep` end to end: stopped part-way or killed with SIGKILL, then resumed,
// every point ends in results.csv exactly once; worker processes give the rows one process gives.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "analysis/results_table.hpp"
#include "common/error.hpp"
#include "tests/support/results_support.hpp"
#include "tests/support/test_support.hpp"
#include "workloads/sweep_points.hpp"
#include "workloads/sweep_spec.hpp"
#include "workloads/validation_suite.hpp"

using namespace tilesim;
using namespace tilesim::analysis;
using namespace tilesim_test;
using Catch::Matchers::Contains;

namespace {

const fs::path& sweep_dir() {
  static const fs::path d = scratch("sweep_test");
  return d;
}

nlohmann::json base_sweep() {
  return nlohmann::json::parse(R"({
    "name": "t",
    "ops": ["gather", "scatter_add"],
    "sizes": {"num_inputs": [16, 64], "num_features": {"from": 16, "to": 64, "times": 4}, "num_outputs": {"from": 32, "to": 96, "step": 32}},
    "backends": ["ipu:bow", "cpu", {"backend": "gpu-model:a100-40gb:eager", "sizes": {"num_features": [64]}}]
  })");
}

std::string sweep_error(const nlohmann::json& doc) {
  try {
    parse_sweep(doc, "s.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The rows without their host-time column (the last), sorted: what two runs must agree on.
// Each data row without its wall_s field (how long the point took to run, the one field two runs of a
// simulated or modeled point may differ in), sorted.
std::vector<std::string> rows_without_wall_time(const fs::path& csv) {
  const auto& columns = tilesim::analysis::result_columns();
  const auto wall = static_cast<std::size_t>(std::find(columns.begin(), columns.end(), "wall_s") - columns.begin());
  REQUIRE(wall < columns.size());
  std::vector<std::string> rows;
  for (const auto& line : data_lines(csv)) {
    std::vector<std::string> fields = tilesim::analysis::split_csv_record(line, csv.string(), 0);
    REQUIRE(fields.size() == columns.size());
    fields.erase(fields.begin() + static_cast<std::ptrdiff_t>(wall));
    std::string row;
    for (const auto& f : fields) row += f + ",";
    rows.push_back(row);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

// A sweep file in the scratch directory: simulated and modeled points only (fast, deterministic).
fs::path small_sweep_file(const std::string& name, const std::string& backends = R"(["ipu:bow", "gpu-model:a100-40gb"])") {
  return write_text(sweep_dir() / (name + ".json"),
                    R"({"name": ")" + name + R"(", "ops": ["gather", "scatter_add"],
                        "sizes": {"num_inputs": [16, 128, 1024], "num_features": [16, 64],
                                  "num_outputs": {"from": 32, "to": 2048, "times": 4}},
                        "backends": )" + backends + "}");
}

}  // namespace

TEST_CASE("sweep files: sizes as lists and ranges, backend subsets, the points in order", "[sweep][unit]") {
  const SweepSpec s = parse_sweep(base_sweep(), "s.json");
  CHECK(s.num_inputs == std::vector<std::int64_t>{16, 64});
  CHECK(s.num_features == std::vector<std::int64_t>{16, 64});
  CHECK(s.num_outputs == std::vector<std::int64_t>{32, 64, 96});
  REQUIRE(s.backends.size() == 3);
  CHECK_FALSE(s.backends[0].subset);
  CHECK(s.backends[2].subset);
  CHECK(s.backends[2].num_features == std::vector<std::int64_t>{64});
  CHECK(s.backends[2].json_path == "backends[2].backend");
  CHECK(s.repeats == 1);
  CHECK(s.indices == "uniform");
  CHECK_FALSE(s.ipu_verify);
  CHECK(s.cpu_timed_calls == 10);
  const auto points = expand_sweep(s);
  CHECK(points.size() == 2 * 12 + 2 * 12 + 2 * 6);
  CHECK(points[0].op == "gather");
  CHECK(points[0].shape.num_outputs == 32);
  CHECK(points[1].shape.num_outputs == 64);  // num_outputs varies fastest, as in the hydronet files
  CHECK(points[3].shape.num_features == 64);
  CHECK(points.back().backend == 2);
  const auto echo = to_json(s);
  CHECK(echo["backends"][2]["sizes"]["num_features"] == nlohmann::json::array({64}));
  CHECK(echo["sizes"]["num_outputs"] == nlohmann::json::array({32, 64, 96}));
}

// SweepPoints decodes point i from i; here against the nested loops that define sweep order (backend,
// op, dtype, num_inputs, num_features, num_outputs, repeat), with dtypes, repeats and a backend subset.
TEST_CASE("sweep points: decoded lazily in sweep order, each found again from its fields", "[sweep][unit]") {
  nlohmann::json doc = base_sweep();
  doc["dtypes"] = {"float32", "float16"};
  doc["repeats"] = 3;
  const SweepSpec s = parse_sweep(doc, "s.json");
  std::vector<SweepPoint> expected;
  for (std::size_t b = 0; b < s.backends.size(); ++b)
    for (const auto& op : s.ops)
      for (const auto& dtype : s.dtypes)
        for (auto in : s.backends[b].num_inputs)
          for (auto f : s.backends[b].num_features)
            for (auto out : s.backends[b].num_outputs)
              for (int rep = 0; rep < s.repeats; ++rep) expected.push_back({op, {in, f, out}, dtype, b, rep});
  const SweepPoints points(s);
  REQUIRE(points.size() == expected.size());
  REQUIRE(points.size() == 2 * 2 * 3 * (12 + 12 + 6));
  std::vector<std::size_t> per_backend(s.backends.size(), 0);
  for (std::size_t i = 0; i < points.size(); ++i) {
    INFO(i);
    const SweepPoint p = points[i];
    CHECK(std::tie(p.op, p.shape.num_inputs, p.shape.num_features, p.shape.num_outputs, p.dtype, p.backend, p.repeat) ==
          std::tie(expected[i].op, expected[i].shape.num_inputs, expected[i].shape.num_features, expected[i].shape.num_outputs,
                   expected[i].dtype, expected[i].backend, expected[i].repeat));
    CHECK(points.backend_of(i) == p.backend);
    CHECK(points.index_of(p.op, p.shape, p.dtype, p.backend, p.repeat) == i);
    ++per_backend[p.backend];
  }
  CHECK(points.per_backend() == per_backend);
  // No such point: a size outside the backend's subset, another dtype, a repeat beyond the sweep's.
  CHECK_FALSE(points.index_of("gather", {16, 16, 32}, "float32", 2, 0));  // backend 2 runs num_features 64 only
  CHECK(points.index_of("gather", {16, 64, 32}, "float32", 2, 0));
  CHECK_FALSE(points.index_of("gather", {16, 64, 32}, "bfloat16", 0, 0));
  CHECK_FALSE(points.index_of("gather", {16, 64, 32}, "float32", 0, 3));
  CHECK_FALSE(points.index_of("schnet_block", {16, 64, 32}, "float32", 0, 0));
  CHECK_FALSE(points.index_of("gather", {16, 64, 32}, "float32", 3, 0));
  CHECK_THROWS_AS(points[points.size()], std::out_of_range);
}

TEST_CASE("the shipped hydronet sweep is the 594-point grid of the reference data", "[sweep][unit]") {
  const SweepSpec s = load_sweep(std::string(TILESIM_SOURCE_DIR) + "/workloads/sweeps/hydronet.json");
  CHECK(s.ops == std::vector<std::string>{"gather", "scatter_add"});
  CHECK(s.num_inputs.size() * s.num_features.size() * s.num_outputs.size() == 594);
  CHECK(s.num_inputs.front() == 16);
  CHECK(s.num_inputs.back() == 4096);
  CHECK(s.num_features.front() == 16);
  CHECK(s.num_features.back() == 512);
  CHECK(s.num_outputs.front() == 32);
  CHECK(s.num_outputs.back() == 32768);
  REQUIRE(s.backends.size() == 3);
  CHECK(s.backends[0].name == "ipu:bow");
  CHECK(s.backends[1].name == "gpu-model:a100-40gb:eager");
  CHECK(s.backends[2].name == "cpu");
  CHECK_FALSE(s.ipu_verify);
  std::map<std::size_t, std::size_t> per_backend;
  for (const auto& p : expand_sweep(s)) ++per_backend[p.backend];
  CHECK(per_backend[0] == 1188);
  CHECK(per_backend[1] == 1188);
  CHECK(per_backend[2] == 1188);
  // Every point of the reference data is a point of the sweep.
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> grid;
  for (const auto& p : expand_sweep(s))
    if (p.backend == 0) grid.insert({p.shape.num_inputs, p.shape.num_features, p.shape.num_outputs});
  CHECK(grid.size() == 594);
}

TEST_CASE("sweep file errors name the file, the JSON path, what was expected and found", "[sweep][unit]") {
  struct Case {
    std::string patch;  // a JSON merge patch on the base sweep
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {R"({"opps": 1})", {"s.json: opps: expected one of the known keys", "unknown key \"opps\""}},
      {R"({"name": "my sweep"})", {"s.json: name: expected a name of 1 to 255 letters", "\"my sweep\""}},
      {R"({"ops": ["gather", "scatter_max"]})", {"s.json: ops[1]: expected one of \"gather\", \"scatter_add\"", "\"scatter_max\""}},
      {R"({"ops": ["gather", "gather"]})", {"ops[1]: expected each name once"}},
      {R"({"dtypes": ["float64"]})", {"dtypes[0]: expected one of \"float32\", \"float16\", \"bfloat16\"", "\"float64\""}},
      {R"({"sizes": {"num_inputs": {"from": 16, "to": 64, "times": 1}}})", {"sizes.num_inputs.times: expected an integer in [2, 1024], found 1"}},
      {R"({"sizes": {"num_inputs": {"from": 16, "to": 64, "times": 2, "step": 16}}})",
       {"sizes.num_inputs: expected exactly one of \"times\"", "found both"}},
      {R"({"sizes": {"num_inputs": {"from": 64, "to": 16, "times": 2}}})", {"sizes.num_inputs.to: expected a size >= from (64), found 16"}},
      {R"({"sizes": {"num_inputs": {"from": 16, "upto": 64, "times": 2}}})", {"sizes.num_inputs.to: expected this key (it is required)"}},
      {R"({"sizes": {"num_outputs": [32, 0]}})", {"sizes.num_outputs[1]: expected an integer size in [1, 2147483647], found 0"}},
      {R"({"sizes": {"num_outputs": [32, 32]}})", {"sizes.num_outputs[1]: expected each size once, found 32 twice"}},
      {R"({"sizes": {"num_outputs": [32.5]}})", {"sizes.num_outputs[0]: expected an integer size", "found 32.5"}},
      {R"({"sizes": {"num_bytes": [1]}})", {"sizes.num_bytes: expected one of the known keys"}},
      {R"({"backends": null})", {"s.json: backends: expected this key (it is required), found nothing"}},
      {R"({"backends": ["cpu", "cpu"]})", {"backends[1]: expected each backend once, found \"cpu\" twice"}},
      {R"({"backends": ["cpu", 7]})", {"backends[1]: expected a backend name or", "found 7"}},
      {R"({"backends": [{"backend": "cpu", "sizes": {"num_features": [16, 48]}}]})",
       {"backends[0].sizes.num_features[1]: expected a value of the sweep's num_features (16, 64), found 48"}},
      {R"({"backends": [{"backend": "cpu", "size": {}}]})", {"backends[0].size: expected one of the known keys"}},
      {R"({"repeats": 0})", {"repeats: expected an integer in [1, 1000], found 0"}},
      {R"({"seed": -1})", {"seed: expected an integer in [0, 9223372036854775807], found -1"}},
      {R"({"indices": "random"})", {"indices: expected one of \"uniform\", \"sorted\", found \"random\""}},
      {R"({"ipu": {"verify": "yes"}})", {"ipu.verify: expected true or false, found \"yes\""}},
      {R"({"cpu": {"timed_calls": 0}})", {"cpu.timed_calls: expected an integer in [1, 100000], found 0"}},
      {R"({"cpu": {"warm_up": 1}})", {"cpu.warm_up: expected one of the known keys"}},
  };
  for (const auto& c : cases) {
    nlohmann::json doc = base_sweep();
    doc.merge_patch(nlohmann::json::parse(c.patch));
    INFO(c.patch);
    const std::string message = sweep_error(doc);
    for (const auto& e : c.expected) CHECK_THAT(message, Contains(e));
  }
  CHECK_THAT(sweep_error(nlohmann::json::array()), Contains("s.json: (top level): expected an object"));
  try {
    load_sweep((sweep_dir() / "missing.json").string());
    FAIL("a missing sweep file was accepted");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Contains("missing.json"));
  }
}

TEST_CASE("point seeds: repeat 0 of seed 0 draws validate's indices, others differ", "[sweep][unit]") {
  const OpShape shape{4096, 512, 32768};
  CHECK(sweep_index_seed(shape, 0, 0) == point_index_seed(shape));
  CHECK(sweep_index_seed(shape, 0, 1) == point_index_seed(shape) + 1000003);
  CHECK(sweep_index_seed(shape, 7, 0) == point_index_seed(shape) + 7);
  CHECK(sweep_index_seed(shape, std::uint64_t{1} << 62, 5) < (std::uint64_t{1} << 63));
}

TEST_CASE("tilesim sweep rejects bad input before running anything", "[sweep][cli]") {
  const fs::path bad_backend = write_text(sweep_dir() / "bad_backend.json",
                                          R"({"name": "bad", "ops": ["gather"], "sizes": {"num_inputs": [16],
                                              "num_features": [16], "num_outputs": [32]}, "backends": ["cpu", "tpu:v4"]})");
  auto r = run_tilesim("sweep " + bad_backend.string() + " --out " + (sweep_dir() / "bad_out").string(), sweep_dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains(bad_backend.string() + ": backends[1]: expected a backend name") && Contains("\"tpu:v4\""));
  CHECK_FALSE(fs::exists(sweep_dir() / "bad_out" / "results.csv"));
  r = run_tilesim("sweep " + bad_backend.string() + " --jobs 0", sweep_dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--jobs"));
  r = run_tilesim("sweep " + bad_backend.string() + " --backends ipu:nosuch", sweep_dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("nosuch"));
}

TEST_CASE("a stopped sweep resumed ends with every point exactly once, as an uninterrupted one", "[sweep][cli][slow]") {
  const fs::path sweep = small_sweep_file("resume");
  const fs::path straight = sweep_dir() / "straight", stopped = sweep_dir() / "stopped";
  auto r = run_tilesim("sweep " + sweep.string() + " --out " + straight.string(), sweep_dir());
  REQUIRE(r.exit_code == 0);
  const std::size_t total = 2 * 3 * 2 * 4 * 2;  // ops x inputs x features x outputs x backends
  CHECK(data_lines(straight / "results.csv").size() == total);
  CHECK_THAT(r.out, Contains("ipu:bow") && Contains("timing-only (outputs not computed)") && Contains("modeled, kernel mode"));

  r = run_tilesim("sweep " + sweep.string() + " --out " + stopped.string() + " --stop-after 7", sweep_dir());
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("stopped after 7 new points"));
  CHECK(data_lines(stopped / "results.csv").size() == 7);

  // Without --resume an existing results.csv is not touched.
  r = run_tilesim("sweep " + sweep.string() + " --out " + stopped.string(), sweep_dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--resume") && Contains("--overwrite"));
  CHECK(data_lines(stopped / "results.csv").size() == 7);

  // A partial last line, as a kill in the middle of a write would leave.
  {
    std::ofstream(stopped / "results.csv", std::ios::app) << "scatter_add,16,16,3";
  }
  r = run_tilesim("sweep " + sweep.string() + " --out " + stopped.string() + " --resume", sweep_dir());
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Contains("dropping a partial last line"));
  CHECK_THAT(r.out, Contains("(7 already in results.csv)"));
  const auto counts = key_counts(stopped / "results.csv");
  CHECK(counts.size() == total);
  for (const auto& [key, n] : counts) {
    INFO(key);
    CHECK(n == 1);
  }
  CHECK(rows_without_wall_time(stopped / "results.csv") == rows_without_wall_time(straight / "results.csv"));

  // Resuming a complete sweep runs nothing.
  r = run_tilesim("sweep " + sweep.string() + " --out " + stopped.string() + " --resume", sweep_dir());
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("sweep: 0 new rows"));
}

TEST_CASE("a sweep killed with SIGKILL and resumed ends with every point exactly once", "[sweep][cli][slow]") {
  const fs::path sweep = write_text(sweep_dir() / "killed.json",
                                    R"({"name": "killed", "ops": ["gather", "scatter_add"],
                                        "sizes": {"num_inputs": {"from": 16, "to": 1024, "times": 2}, "num_features": [16, 64],
                                                  "num_outputs": {"from": 32, "to": 8192, "times": 2}},
                                        "backends": ["ipu:bow"]})");
  const std::size_t total = 2 * 7 * 2 * 9;
  const fs::path out = sweep_dir() / "killed_out";
  const fs::path csv = out / "results.csv";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The child becomes the sweep; its output is not needed.
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    ::execl(TILESIM_BINARY, TILESIM_BINARY, "sweep", sweep.c_str(), "--out", out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Kill it as soon as a few rows are there (well before the end).
  std::size_t rows_at_kill = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(csv)) {
      rows_at_kill = data_lines(csv).size();
      if (rows_at_kill >= 5) break;
    }
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) FAIL("the sweep ended before it could be killed");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  const std::size_t rows_after_kill = data_lines(csv).size();
  CHECK(rows_after_kill >= 5);
  CHECK(rows_after_kill < total);

  const auto r = run_tilesim("sweep " + sweep.string() + " --out " + out.string() + " --resume", sweep_dir());
  REQUIRE(r.exit_code == 0);
  const auto counts = key_counts(csv);
  CHECK(counts.size() == total);
  std::size_t duplicated = 0;
  for (const auto& [key, n] : counts) duplicated += n != 1 ? 1 : 0;
  CHECK(duplicated == 0);
}

TEST_CASE("worker processes (--jobs 2) give the rows one process gives, in sweep order", "[sweep][cli][slow]") {
  const fs::path sweep = small_sweep_file("jobs", R"(["ipu:bow", "gpu-model:a100-40gb:eager", {"backend": "cpu", "sizes": {"num_inputs": [16], "num_outputs": [32]}}])");
  const fs::path one = sweep_dir() / "jobs1", two = sweep_dir() / "jobs2";
  auto r = run_tilesim("sweep " + sweep.string() + " --out " + one.string() + " --jobs 1", sweep_dir());
  REQUIRE(r.exit_code == 0);
  r = run_tilesim("sweep " + sweep.string() + " --out " + two.string() + " --jobs 2", sweep_dir());
  REQUIRE(r.exit_code == 0);
  // Row by row, in the same order: the points' keys line up.
  const auto rows_one = read_results_csv((one / "results.csv").string());
  const auto rows_two = read_results_csv((two / "results.csv").string());
  REQUIRE(rows_one.size() == rows_two.size());
  for (std::size_t i = 0; i < rows_one.size(); ++i) CHECK(tilesim::analysis::point_key(rows_one[i]) == tilesim::analysis::point_key(rows_two[i]));
  // The CPU rows are measured (times differ run to run): compare everything else exactly.
  auto simulated_and_modeled = [](const fs::path& csv) {
    std::vector<std::string> rows;
    for (const auto& row : rows_without_wall_time(csv))
      if (row.find(",cpu,") == std::string::npos) rows.push_back(row);
    return rows;
  };
  CHECK(simulated_and_modeled(one / "results.csv") == simulated_and_modeled(two / "results.csv"));
  CHECK(key_counts(two / "results.csv").size() == 2 * 3 * 2 * 4 * 2 + 2 * 2);
  // Every row says what it is.
  for (const auto& row : read_results_csv((two / "results.csv").string())) {
    if (row.backend == "ipu:bow") {
      CHECK(row.kind == "simulated");
      CHECK(row.mode == "timing-only");
      CHECK(row.verified == "timing-only");
      CHECK(row.cycles);
      CHECK(row.bytes.count("exchange_bytes"));
      CHECK(row.intensity_level == "tile_sram");
    } else if (row.backend == "cpu") {
      CHECK(row.kind == "measured");
      CHECK(row.mode == "median-of-10");
      CHECK(row.verified == "yes");
      CHECK(row.intensity_level == "dram");
    } else {
      CHECK(row.kind == "modeled");
      CHECK(row.mode == "eager");
      CHECK(row.verified == "modeled");
      CHECK(row.intensity_level == "hbm");
    }
  }
}

TEST_CASE("functional IPU sweeps check the outputs and give the timing-only cycles", "[sweep][cli]") {
  const fs::path sweep = write_text(sweep_dir() / "verify.json",
                                    R"({"name": "verify", "ops": ["gather", "scatter_add"],
                                        "sizes": {"num_inputs": [16, 300], "num_features": [16], "num_outputs": [32, 700]},
                                        "backends": ["ipu:bow"], "indices": "sorted", "repeats": 2})");
  auto r = run_tilesim("sweep " + sweep.string() + " --out " + (sweep_dir() / "timing").string(), sweep_dir());
  REQUIRE(r.exit_code == 0);
  r = run_tilesim("sweep " + sweep.string() + " --out " + (sweep_dir() / "functional").string() + " --verify", sweep_dir());
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("functional (outputs checked)"));
  const auto timing = read_results_csv((sweep_dir() / "timing" / "results.csv").string());
  const auto functional = read_results_csv((sweep_dir() / "functional" / "results.csv").string());
  REQUIRE(timing.size() == 16);
  REQUIRE(functional.size() == 16);
  std::set<std::uint64_t> seeds;
  for (std::size_t i = 0; i < timing.size(); ++i) {
    CHECK(functional[i].verified == "yes");
    CHECK(functional[i].mode == "functional");
    CHECK(timing[i].verified == "timing-only");
    CHECK(*functional[i].cycles == *timing[i].cycles);
    seeds.insert(timing[i].index_seed);
  }
  CHECK(seeds.size() == 8);  // one per shape and repeat: repeats draw other indices
}

TEST_CASE("the shipped schnet_block sweep is the hydronet grid of the SchNet block", "[sweep][unit]") {
  const SweepSpec s = load_sweep(std::string(TILESIM_SOURCE_DIR) + "/workloads/sweeps/schnet_block.json");
  const SweepSpec h = load_sweep(std::string(TILESIM_SOURCE_DIR) + "/workloads/sweeps/hydronet.json");
  CHECK(s.ops == std::vector<std::string>{"schnet_block"});
  CHECK(s.num_inputs == h.num_inputs);
  CHECK(s.num_features == h.num_features);
  CHECK(s.num_outputs == h.num_outputs);
  REQUIRE(s.backends.size() == 3);
  std::map<std::string, std::size_t> per_backend;
  for (const auto& p : expand_sweep(s)) ++per_backend[s.backends[p.backend].name];
  CHECK(per_backend["ipu:bow"] == 594);
  CHECK(per_backend["gpu-model:a100-40gb:eager"] == 594);
  CHECK(per_backend["cpu"] < 594);
}

TEST_CASE("a schnet_block sweep point is its block's total, verified on the CPU", "[sweep][cli]") {
  const fs::path d = sweep_dir() / "schnet";
  const auto sweep = write_text(d / "s.json", R"({"name": "sb", "ops": ["schnet_block"],
    "sizes": {"num_inputs": [16], "num_features": [16], "num_outputs": [32, 64]},
    "backends": ["cpu", "gpu-model:a100-40gb:eager"], "cpu": {"warmup": 0, "timed_calls": 1}})");
  const auto r = run_tilesim("sweep " + sweep.string() + " --out " + (d / "out").string(), d);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto rows = parse_results_csv(slurp(d / "out" / "results.csv"), "results.csv");
  REQUIRE(rows.size() == 4);
  for (const auto& row : rows) {
    INFO(row.backend);
    CHECK(row.op == "schnet_block");
    CHECK(row.verified == (row.backend == "cpu" ? "yes" : "modeled"));
    REQUIRE(row.time_s);
    CHECK(*row.time_s > 0);
    // FLOPs of the block (workloads.md: 2 E F (G + F + 1.5) + 6 N F^2, plus bias adds, softplus and cosines).
    const double n = 16, f = 16, e = static_cast<double>(row.shape.num_outputs), g = 50;
    CHECK(row.flops == Approx(2 * e * f * (g + f + 1.5) + 6 * n * f * f + e + 3 * e * f + 3 * n * f));
  }
  // Both backends report the same FLOPs for a point.
  CHECK(rows[0].flops == rows[2].flops);
}
