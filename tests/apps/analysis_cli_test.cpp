// The analysis commands end to end: `tilesim calibrate` writes a CPU machine file whose figures say
// where they came from; `roofline`, `plot surface` and `report` turn a results.csv into valid figures
// and tables; bad input is exit code 2 with the file and JSON path.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/results_support.hpp"
#include "tests/support/test_support.hpp"

using namespace tilesim_test;
using Catch::Matchers::Contains;

namespace {

const fs::path& dir() {
  static const fs::path d = scratch("analysis_cli_test");
  return d;
}

// A small sweep on the three kinds of backend over a corner of the hydronet grid; run once per test
// process.
fs::path small_results() {
  static const fs::path csv = [] {
    const fs::path sweep = write_text(dir() / "small.json",
                                      R"({"name": "small", "ops": ["gather", "scatter_add"],
                                          "sizes": {"num_inputs": [16, 256, 4096], "num_features": [16, 128],
                                                    "num_outputs": [32, 512, 8192, 32768]},
                                          "backends": ["ipu:bow", "gpu-model:a100-40gb:eager",
                                                       {"backend": "cpu", "sizes": {"num_inputs": [16, 256], "num_outputs": [32, 512]}}]})");
    const auto r = run_tilesim("sweep " + sweep.string() + " --out " + (dir() / "small").string() + " --overwrite", dir());
    if (r.exit_code != 0) throw std::runtime_error("the small sweep failed: " + r.err);
    return dir() / "small" / "results.csv";
  }();
  return csv;
}

// A CPU machine file with made-up figures, so the roofline tests need no calibration run.
fs::path cpu_machine_fixture() {
  return write_text(dir() / "cpu_fixture.json", R"({
    "name": "fixture", "description": "made-up ceilings for tests",
    "host": {"hostname": "test", "cpu_model": "Test CPU", "logical_cpus": 2, "threads": 2,
             "measured_utc": "2025-01-01T00:00:00Z", "tool": "tilesim test"},
    "bandwidth_bytes_per_s": {"dram_stream": {"value": 2e10, "source": "made up for a test"},
                              "dram_random_gather": {"value": 8e9, "source": "made up for a test"}},
    "peak_flops_per_s": {"float32": {"value": 2e11, "source": "made up for a test"},
                         "float64": {"value": 1e11, "source": "made up for a test"}}
  })");
}

// The points of a report row "| op | target | baseline | N ... |": N, plus the k of "N (+k disturbed, ...)"
// when some measured CPU points were taken while other work held the host's cores (a shared host's
// noise, which the report sets apart rather than drops; an exact "8" failed under ASan when one was);
// -1 when the row is not in `table`.
long report_row_points(const std::string& table, const std::string& row_prefix) {
  const auto at = table.find(row_prefix);
  if (at == std::string::npos) return -1;
  const std::string cell = table.substr(at + row_prefix.size(), table.find('|', at + row_prefix.size()) - at - row_prefix.size());
  long points = std::stol(cell);
  const auto plus = cell.find("(+");
  if (plus != std::string::npos) points += std::stol(cell.substr(plus + 2));
  return points;  // "N (all disturbed)": N is every point
}

}  // namespace

TEST_CASE("tilesim calibrate writes a CPU machine file measured here, every figure sourced", "[analysis][cli][calibrate][slow]") {
  const fs::path out = dir() / "calibration" / "cpu.json";
  const auto r = run_tilesim("calibrate --out " + out.string(), dir());
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("DRAM streaming bandwidth") && Contains("peak float32") && Contains(out.string()));
  const auto doc = nlohmann::json::parse(slurp(out));
  CHECK(doc["host"]["threads"].get<int>() >= 1);
  CHECK(doc["host"]["measured_utc"].get<std::string>().size() == 20);  // 2025-01-01T00:00:00Z
  const std::string host = doc["host"]["hostname"];
  for (const auto& [section, keys] : {std::pair<std::string, std::vector<std::string>>{"bandwidth_bytes_per_s", {"dram_stream", "dram_random_gather", "llc_stream"}},
                                      {"peak_flops_per_s", {"float32", "float64"}}})
    for (const auto& key : keys) {
      INFO(section + "." + key);
      const auto& f = doc[section][key];
      CHECK(f["value"].get<double>() > 1e8);
      const std::string source = f["source"];
      CHECK_THAT(source, Contains("measured by") && Contains("on host " + host) && Contains(doc["host"]["measured_utc"].get<std::string>()));
    }
  // The file it wrote is what roofline reads.
  const auto roof = run_tilesim("roofline " + small_results().string() + " --machine cpu:" + out.string() + " --out " +
                                    (dir() / "calibrated_plots").string(),
                                dir());
  CHECK(roof.exit_code == 0);
  CHECK(figure_problem(dir() / "calibrated_plots", "bandwidth_cpu") == "");
  // The cache roof beside the DRAM ones: points of ops whose data stay in the caches sit under it.
  CHECK_THAT(slurp(dir() / "calibrated_plots" / "roofline_cpu.gp"), Contains("last-level cache stream") && Contains("DRAM stream"));
  CHECK_THAT(doc["bandwidth_bytes_per_s"]["llc_stream"]["source"].get<std::string>(), Contains("within the") && Contains("last-level cache"));
}

TEST_CASE("tilesim roofline: one roofline and one bandwidth figure per backend, ceilings from machine files", "[analysis][cli][roofline][slow]") {
  const fs::path plots = dir() / "roofline_plots";
  const auto r = run_tilesim("roofline " + small_results().string() + " --machine cpu:" + cpu_machine_fixture().string() +
                                 " --out " + plots.string(),
                             dir());
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("models/ipu/machines/bow.json") && Contains("models/gpu/machines/a100-40gb.json") &&
                        Contains("cpu_fixture.json"));
  for (const char* stem : {"roofline_ipu-bow", "bandwidth_ipu-bow", "roofline_gpu-model-a100-40gb-eager",
                           "bandwidth_gpu-model-a100-40gb-eager", "roofline_cpu", "bandwidth_cpu"}) {
    INFO(stem);
    CHECK(figure_problem(plots, stem) == "");
  }
  const std::string ipu = slurp(plots / "roofline_ipu-bow.dat");
  CHECK_THAT(ipu, Contains("bandwidth exchange") && Contains("derived from") && Contains("compute float32") &&
                      Contains("codelets.amp_float32_flops_per_tile_cycle"));
  // The ceilings the simulator does not use come from the machine file's roofline section.
  CHECK_THAT(ipu, Contains("bandwidth tile_sram = 6.61e+13 B/s") && Contains("compute float16 = 3.5e+14 FLOP/s") &&
                      Contains("Bow-2000 datasheet") && Contains("models/ipu/machines/bow.json]"));
  CHECK_THAT(slurp(plots / "bandwidth_cpu.gp"), Contains("DRAM stream 20 GB/s") && Contains("DRAM random gather 8 GB/s"));
  // A machine file from before the cache roof has none, and the figures draw without it.
  CHECK_THAT(slurp(plots / "roofline_cpu.gp"), !Contains("last-level cache"));
  // With llc_stream, the cache roof is drawn too.
  std::string with_llc = slurp(cpu_machine_fixture());
  const std::string gather_key = "\"dram_random_gather\"";
  with_llc.insert(with_llc.find(gather_key), "\"llc_stream\": {\"value\": 9e10, \"source\": \"a test figure\"}, ");
  const fs::path llc_file = write_text(dir() / "cpu_llc.json", with_llc);
  const fs::path llc_plots = dir() / "roofline_llc_plots";
  REQUIRE(run_tilesim("roofline " + small_results().string() + " --machine cpu:" + llc_file.string() + " --out " + llc_plots.string(),
                      dir()).exit_code == 0);
  CHECK_THAT(slurp(llc_plots / "roofline_cpu.gp"), Contains("last-level cache stream 90 GB/s"));
}

TEST_CASE("tilesim roofline rejects bad machines with the file and JSON path", "[analysis][cli][roofline]") {
  std::string text = slurp(cpu_machine_fixture());
  text.replace(text.find("\"dram_stream\""), 13, "\"dram_strem\"");
  const fs::path bad = write_text(dir() / "bad_cpu.json", text);
  auto r = run_tilesim("roofline " + small_results().string() + " --machine cpu:" + bad.string() + " --out " +
                           (dir() / "bad_plots").string(),
                       dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains(bad.string()) && Contains("bandwidth_bytes_per_s"));
  r = run_tilesim("roofline " + small_results().string() + " --machine tpu:v4", dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--machine") && Contains("tpu:v4"));
  r = run_tilesim("roofline " + (dir() / "none.csv").string(), dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("none.csv"));
}

TEST_CASE("tilesim plot surface: modeled and measured side by side, and per feature size", "[analysis][cli][plots]") {
  const fs::path plots = dir() / "surface_plots";
  const std::string ref = std::string(TILESIM_SOURCE_DIR) + "/validation/hydronet-gnn/a100";
  auto r = run_tilesim("plot surface " + small_results().string() + " --target ipu:bow --baseline gpu-model:a100-40gb:eager --baseline " +
                           ref + " --average-over num_features --out " + plots.string(),
                       dir());
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("gather: ipu:bow over gpu-model:a100-40gb:eager: median") && Contains("scatter_add: ipu:bow over " + ref));
  for (const char* op : {"gather", "scatter_add"})
    for (const char* kind : {"heatmap", "surface3d"}) {
      const std::string stem = std::string("speedup_") + op + "_ipu-bow_over_gpu-model-a100-40gb-eager_measured-a100_mean_" + kind;
      INFO(stem);
      CHECK(figure_problem(plots, stem) == "");
    }
  CHECK_THAT(slurp(plots / "speedup_gather_ipu-bow_over_gpu-model-a100-40gb-eager_measured-a100_mean_heatmap.gp"),
             Contains("Bow IPU (simulated)\\nover A100 (measured)") && Contains("set multiplot layout 1,2"));

  r = run_tilesim("plot surface " + small_results().string() + " --target ipu:bow --baseline cpu --ops scatter_add --out " +
                      plots.string(),
                  dir());
  REQUIRE(r.exit_code == 0);
  CHECK(figure_problem(plots, "speedup_scatter_add_ipu-bow_over_cpu_heatmap") == "");
  CHECK_FALSE(fs::exists(plots / "speedup_gather_ipu-bow_over_cpu_heatmap.png"));
}

TEST_CASE("tilesim plot surface rejects what it cannot draw", "[analysis][cli][plots]") {
  const std::string results = small_results().string();
  auto r = run_tilesim("plot surface " + results + " --target ipu:bow --baseline gpu-model:h100-sxm", dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("ipu:bow, gpu-model:a100-40gb:eager, cpu") && Contains("gpu-model:h100-sxm"));
  r = run_tilesim("plot surface " + results + " --target ipu:bow --baseline cpu --average-over num_inputs", dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--average-over: expected num_features"));
  r = run_tilesim("plot surface " + results + " --target ipu:bow --baseline cpu --baseline gpu-model:a100-40gb:eager", dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("several baselines or targets"));
  r = run_tilesim("plot surface " + results + " --target ipu:bow --baseline cpu --ops scatter_mean", dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--ops") && Contains("scatter_mean"));
  r = run_tilesim("plot surface " + results + " --target ipu:bow", dir());
  CHECK(r.exit_code == 2);
}

TEST_CASE("tilesim plot surface: without --x and --y, or with the defaults, the figures it always drew", "[analysis][cli][plots]") {
  const std::string results = write_text(dir() / "axes_defaults" / "results.csv", surface_test_op_results()).string();
  const fs::path plain = dir() / "axes_defaults" / "plain", named = dir() / "axes_defaults" / "named";
  auto r = run_tilesim("plot surface " + results + " --target ipu:bow --baseline cpu --out " + plain.string(), dir());
  REQUIRE(r.exit_code == 0);
  r = run_tilesim("plot surface " + results + " --target ipu:bow --baseline cpu --x num_inputs --y num_outputs --out " + named.string(),
                  dir());
  REQUIRE(r.exit_code == 0);
  for (const char* stem : {"speedup_gather_ipu-bow_over_cpu_heatmap", "speedup_gather_ipu-bow_over_cpu_surface3d"}) {
    INFO(stem);
    CHECK(figure_problem(plain, stem) == "");
    for (const char* ext : {".gp", ".dat"}) CHECK(slurp(plain / (std::string(stem) + ext)) == slurp(named / (std::string(stem) + ext)));
  }
  // One panel per num_features over (num_inputs x num_outputs), log axes, sizes as integers.
  const std::string data = slurp(plain / "speedup_gather_ipu-bow_over_cpu_heatmap.dat");
  CHECK_THAT(data, Contains("#   cells: num_inputs num_outputs x_low") && Contains("# panel 1: num_features = 64") &&
                       Contains("\n16 32 4 64 8 128 0.301029996 2 \"2.00\" 0\n"));
  CHECK_THAT(slurp(plain / "speedup_gather_ipu-bow_over_cpu_heatmap.gp"),
             Contains("set logscale xy 2\n") && Contains("num\\\\_inputs (rows)"));
}

TEST_CASE("tilesim plot surface --x num_features --y num_outputs: the speedups in the cells", "[analysis][cli][plots]") {
  const std::string results = write_text(dir() / "axes_features" / "results.csv", surface_test_op_results()).string();
  const fs::path plots = dir() / "axes_features" / "plots";
  const std::string base =
      "plot surface " + results + " --target ipu:bow --baseline cpu --x num_features --y num_outputs --out " + plots.string();
  // Averaged over num_inputs: the geometric means of results_support.hpp, num_features linear (4x).
  auto r = run_tilesim(base + " --average-over all", dir());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string mean = "speedup_gather_ipu-bow_over_cpu_mean_x-num_features_y-num_outputs";
  CHECK(figure_problem(plots, mean + "_heatmap") == "");
  CHECK(figure_problem(plots, mean + "_surface3d") == "");
  CHECK_THAT(slurp(plots / (mean + "_heatmap.dat")),
             Contains("#   cells: num_features num_outputs") && Contains("\n16 32 -8 40 8 128 0.602059991 4 \"4.00\"") &&
                 Contains("\n16 512 -8 40 128 2048 0 1 \"1.00\"") && Contains("\n64 32 40 88 8 128 0 1 \"1.00\"") &&
                 Contains("\n64 512 40 88 128 2048 -0.602059991 0.25 \"0.25\""));
  CHECK_THAT(slurp(plots / (mean + "_heatmap.gp")),
             Contains("set logscale y 2\n") && !Contains("set logscale xy") && Contains("geometric mean over num\\\\_inputs 16-256"));
  // Without --average-over: one panel per num_inputs, each speedup as it is.
  r = run_tilesim(base, dir());
  REQUIRE(r.exit_code == 0);
  const std::string panels = "speedup_gather_ipu-bow_over_cpu_x-num_features_y-num_outputs";
  CHECK(figure_problem(plots, panels + "_heatmap") == "");
  const std::string data = slurp(plots / (panels + "_heatmap.dat"));
  CHECK_THAT(data, Contains("# panel 0: num_inputs = 16") && Contains("# panel 1: num_inputs = 256") &&
                       Contains("\n16 32 -8 40 8 128 0.301029996 2 \"2.00\"") && Contains("\n16 32 -8 40 8 128 0.903089987 8 \"8.00\""));
  CHECK_THAT(slurp(plots / (panels + "_heatmap.gp")), Contains("one panel per num\\\\_inputs"));
}

TEST_CASE("tilesim plot surface names a column the results do not have, and the columns they do", "[analysis][cli][plots]") {
  const std::string results = write_text(dir() / "axes_missing" / "results.csv", surface_test_op_results()).string();
  auto r = run_tilesim("plot surface " + results + " --target ipu:bow --baseline cpu --x batch --y num_outputs", dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains(results + ": --x: expected a column of the results that identifies a point") &&
                        Contains("(num_inputs, num_features, num_outputs)") && Contains("found no column \"batch\""));
  r = run_tilesim("plot surface " + results + " --target ipu:bow --baseline cpu --x num_features --y num_features", dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--x, --y: expected two different columns"));
  r = run_tilesim("plot surface " + results + " --target ipu:bow --baseline cpu --x num_features --average-over num_inputs,batch", dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--average-over") && Contains("no column \"batch\""));
}

TEST_CASE("tilesim plot surface over a workload sweep's axis columns", "[analysis][cli][plots]") {
  const std::string results = write_text(dir() / "sage_sweep" / "results.csv", surface_test_workload_results()).string();
  const fs::path plots = dir() / "sage_sweep" / "plots";
  auto r = run_tilesim("plot surface " + results + " --target ipu:bow --baseline gpu-model:a100-40gb:eager --x loader.batch_size "
                       "--y 'model[*].out' --out " + plots.string(),
                       dir());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("sage_small: ipu:bow over gpu-model:a100-40gb:eager: median 1.50x over 4 points"));
  const std::string stem = "speedup_sage_small_ipu-bow_over_gpu-model-a100-40gb-eager_x-loader.batch_size_y-model___.out";
  CHECK(figure_problem(plots, stem + "_heatmap") == "");
  CHECK(figure_problem(plots, stem + "_surface3d") == "");
  CHECK_THAT(slurp(plots / (stem + "_heatmap.dat")),
             Contains("\n64 16 16 256 4 64 0.301029996 2 \"2.00\"") && Contains("\n1024 256 256 4096 64 1024 0 1 \"1.00\""));
  CHECK_THAT(slurp(plots / (stem + "_heatmap.gp")), Contains("loader.batch\\\\_size") && Contains("set logscale xy 2"));
  // Its rows have neither sizes nor ops.
  r = run_tilesim("plot surface " + results + " --target ipu:bow --baseline gpu-model:a100-40gb:eager", dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--x: expected") && Contains("found no column \"num_inputs\"") && Contains("loader.batch_size"));
  r = run_tilesim("plot surface " + results + " --target ipu:bow --baseline gpu-model:a100-40gb:eager --x loader.batch_size "
                  "--y 'model[*].out' --ops gather",
                  dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--ops"));
}

TEST_CASE("tilesim report: Markdown, LaTeX, CSV and summary tables of every backend pair", "[analysis][cli][report][slow]") {
  const std::string results = small_results().string();
  auto r = run_tilesim("report " + results, dir());
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("| op | target | baseline |") &&
                        Contains("| gather | Bow IPU (simulated) | A100-40GB model (eager) | 24 |"));
  // Pairs with the measured CPU: 8 points each, some possibly set apart as disturbed on a busy host.
  CHECK(report_row_points(r.out, "| scatter_add | Bow IPU (simulated) | CPU (measured) | ") == 8);
  CHECK(report_row_points(r.out, "| gather | A100-40GB model (eager) | CPU (measured) | ") == 8);
  r = run_tilesim("report " + results + " --format latex", dir());
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("\\toprule") && Contains("scatter\\_add"));
  r = run_tilesim("report " + results + " --format csv --target ipu:bow --baseline " + std::string(TILESIM_SOURCE_DIR) +
                      "/validation/hydronet-gnn/bow",
                  dir());
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("op,target,target_kind") && Contains("gather,ipu:bow,simulated,timing-only,") &&
                        Contains("hydronet-gnn/bow,measured,,24,"));
  r = run_tilesim("report " + results + " --format summary --target ipu:bow --baseline gpu-model:a100-40gb:eager --baseline cpu", dir());
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("results: ipu:bow 48 points (simulated, timing-only), gpu-model:a100-40gb:eager 48 points") &&
                        Contains("Bow IPU (simulated) over A100-40GB model (eager): gather median"));
  r = run_tilesim("report " + results + " --format html", dir());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Contains("--format") && Contains("html"));
  r = run_tilesim("report " + results + " --target ipu:bow", dir());
  CHECK(r.exit_code == 2);
}
