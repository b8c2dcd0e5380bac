#pragma once
// Test helpers over results.csv files, for the sweep tests.
#include <filesystem>
#include <map>
#include <string>

#include "analysis/results_table.hpp"
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

}  // namespace tilesim_test
