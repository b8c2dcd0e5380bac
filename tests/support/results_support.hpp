#pragma once
// Test helpers over results.csv files, for the sweep tests.
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/results_table.hpp"
#include "results/workload_sweep_columns.hpp"
#include "tests/support/test_support.hpp"

namespace tilesim_test {

// Every point key of a results.csv with how often it is there.
inline std::map<std::string, int> key_counts(const std::filesystem::path& csv) {
  std::map<std::string, int> counts;
  for (const auto& row : tilesim::analysis::read_results_csv(csv.string())) ++counts[tilesim::analysis::point_key(row)];
  return counts;
}

// Runs a sweep of `ops_json` (a JSON list of op names) at two feature widths on ipu:bow over SRAM per
// tile x exchange bandwidth, each at half, the shipped value and twice (9 machines), into dir/out; the
// CLI cases of the design-space plots read it. Returns the sweep's output folder.
inline std::filesystem::path run_sram_exchange_sweep(const std::filesystem::path& dir, const std::string& ops_json) {
  const std::filesystem::path sweep = write_text(dir / "sram_exchange.json", R"({"name": "sram_exchange", "ops": )" + ops_json + R"(,
      "sizes": {"num_inputs": [256], "num_features": [16, 64], "num_outputs": [2048]},
      "backends": [{"backend": "ipu:bow", "machine": {"chip.sram_bytes_per_tile": {"scale": [0.5, 1, 2]},
                                                      "chip.exchange_bytes_per_cycle": {"scale": [0.5, 1, 2]}}}]})");
  const std::filesystem::path out = dir / "out";
  const CliResult swept = run_tilesim("sweep " + sweep.string() + " --out " + out.string() + " --overwrite", dir);
  INFO(swept.err);
  REQUIRE(swept.exit_code == 0);
  return out;
}

// A small op sweep's results.csv as tilesim sweep writes it, for the speedup surfaces over other
// columns: gather on ipu:bow (simulated) and cpu (measured) over num_inputs {16, 256} x num_features
// {16, 64} x num_outputs {32, 512}. The CPU takes 10 us everywhere; the IPU's speedup over it at
// (num_features, num_outputs) is
//   num_inputs 16:  (16, 32) 2   (16, 512) 1   (64, 32) 0.5   (64, 512) 0.25
//   num_inputs 256: (16, 32) 8   (16, 512) 1   (64, 32) 2     (64, 512) 0.25
// so over (num_features x num_outputs) the geometric means over num_inputs are 4, 1, 1 and 0.25. Powers
// of two throughout: every time and ratio is exact.
inline std::string surface_test_op_results() {
  const std::map<std::tuple<int, int, int>, double> speedup = {
      {{16, 16, 32}, 2},  {{16, 16, 512}, 1},  {{16, 64, 32}, 0.5},  {{16, 64, 512}, 0.25},
      {{256, 16, 32}, 8}, {{256, 16, 512}, 1}, {{256, 64, 32}, 2.0}, {{256, 64, 512}, 0.25}};
  std::string csv = tilesim::analysis::results_csv_header();
  for (const auto& [point, s] : speedup)
    for (const bool ipu : {true, false}) {
      tilesim::analysis::ResultRow r;
      r.op = "gather";
      r.shape = {std::get<0>(point), std::get<1>(point), std::get<2>(point)};
      r.backend = ipu ? "ipu:bow" : "cpu";
      r.kind = ipu ? "simulated" : "measured";
      r.mode = ipu ? "timing-only" : "median-of-10";
      r.machine = ipu ? "bow" : "test host";
      r.time_s = ipu ? 1e-5 / s : 1e-5;
      r.verified = ipu ? "timing-only" : "yes";
      csv += tilesim::analysis::results_csv_row(r);
    }
  return csv;
}

// A workload sweep's results.csv (docs/sweep-format.md, "results.csv of a workload sweep") over the
// axes loader.batch_size {64, 1024} (and 4096 where the IPU does not fit) x model[*].out {16, 256}, on
// ipu:bow and gpu-model:a100-40gb:eager. The A100 model takes 1 ms per run; the IPU's speedup over it
// at (batch size, width) is (64, 16) 2, (64, 256) 0.5, (1024, 16) 4, (1024, 256) 1.
inline std::string surface_test_workload_results() {
  std::vector<std::string> columns = tilesim::workload_sweep_leading_columns();
  for (const char* c : {"loader.batch_size", "model[*].out"}) columns.push_back(c);
  columns.push_back(tilesim::workload_sweep_status_column());
  std::string csv;
  for (std::size_t i = 0; i < columns.size(); ++i) csv += (i ? "," : "") + columns[i];
  csv += "\n";
  struct Point {
    int batch, width;
    double ipu_speedup;  // 0: the IPU does not fit
  };
  const std::vector<Point> points = {{64, 16, 2}, {64, 256, 0.5}, {1024, 16, 4}, {1024, 256, 1}, {4096, 256, 0}};
  for (std::size_t p = 0; p < points.size(); ++p)
    for (const bool ipu : {true, false}) {
      const bool fits = !ipu || points[p].ipu_speedup > 0;
      char time[32];
      std::snprintf(time, sizeof time, "%.10g", ipu && fits ? 1e-3 / points[p].ipu_speedup : 1e-3);
      std::map<std::string, std::string> cells = {
          {"workload", "sage_small"}, {"knob", "batch_size"}, {"batch_size", std::to_string(points[p].batch)},
          {"backend", ipu ? "ipu:bow" : "gpu-model:a100-40gb:eager"}, {"kind", ipu ? "simulated" : "modeled"},
          {"verified", fits ? (ipu ? "timing-only" : "modeled") : "does-not-fit"}, {"point", std::to_string(p)},
          {"run", "minibatch"}, {"total_time_s", fits ? time : ""}, {"loader.batch_size", std::to_string(points[p].batch)},
          {"model[*].out", std::to_string(points[p].width)}, {"status", fits ? "ok" : "does_not_fit"}};
      for (std::size_t i = 0; i < columns.size(); ++i) csv += (i ? "," : "") + tilesim::analysis::csv_field(cells[columns[i]]);
      csv += "\n";
    }
  return csv;
}

}  // namespace tilesim_test
