// How many worker processes a sweep runs by default, and the order its rows end in: worker processes
// append rows as they finish them, and a sweep that runs to its end puts results.csv back in sweep
// order (runs/sweep/rank_files.hpp, put_rows_in_sweep_order).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "analysis/results_table.hpp"
#include "common/host_info.hpp"
#include "common/limits.hpp"
#include "runs/sweep/rank_files.hpp"
#include "runs/sweep/run_sweep.hpp"
#include "tests/support/test_support.hpp"

using namespace tilesim;
using runs::sweep::RowOrder;

namespace {

// A row of results.csv for a gather point with `outputs` lookups; its position in a sweep is its index
// among the `outputs` values 32, 64, 128, ...
std::string gather_row(std::int64_t outputs) {
  analysis::ResultRow row;
  row.op = "gather";
  row.shape = {16, 16, outputs};
  row.backend = "gpu-model:a100-40gb";
  row.kind = "modeled";
  row.mode = "kernel";
  row.machine = "a100-40gb";
  row.time_s = 1e-6 * static_cast<double>(outputs);
  row.verified = "modeled";
  return analysis::results_csv_row(row);
}

std::optional<std::size_t> position_by_outputs(const analysis::ResultRow& row) {
  if (row.op != "gather") return std::nullopt;
  std::size_t k = 0;
  for (std::int64_t n = 32; n < row.shape.num_outputs; n *= 2) ++k;
  return k;
}

std::vector<std::int64_t> outputs_in_file(const std::string& path) {
  std::vector<std::int64_t> outputs;
  for (const auto& row : analysis::parse_results_csv(tilesim_test::slurp(path), path)) outputs.push_back(row.shape.num_outputs);
  return outputs;
}

}  // namespace

TEST_CASE("results.csv rows out of sweep order are put back in it, rows in order are left alone", "[sweep][unit]") {
  tilesim_test::TempDir dir("row-order");
  const std::string header = analysis::results_csv_header();
  const std::string csv =
      dir.write("results.csv", header + gather_row(128) + gather_row(32) + gather_row(256) + gather_row(64));
  CHECK(runs::sweep::put_rows_in_sweep_order(csv, position_by_outputs, limits::max_results_csv_bytes) == RowOrder::rewritten);
  CHECK(outputs_in_file(csv) == std::vector<std::int64_t>{32, 64, 128, 256});
  const std::string sorted = tilesim_test::slurp(csv);
  CHECK(runs::sweep::put_rows_in_sweep_order(csv, position_by_outputs, limits::max_results_csv_bytes) == RowOrder::already);
  CHECK(tilesim_test::slurp(csv) == sorted);

  // A file over the bound, and one a writer left with a partial last line, are left as they are.
  const std::string shuffled = header + gather_row(64) + gather_row(32);
  const std::string big = dir.write("big.csv", shuffled);
  CHECK(runs::sweep::put_rows_in_sweep_order(big, position_by_outputs, shuffled.size() - 1) == RowOrder::too_large);
  CHECK(tilesim_test::slurp(big) == shuffled);
  const std::string cut = dir.write("cut.csv", shuffled + "gather,16,16");
  CHECK(runs::sweep::put_rows_in_sweep_order(cut, position_by_outputs, limits::max_results_csv_bytes) == RowOrder::partial_line);
  CHECK(tilesim_test::slurp(cut) == shuffled + "gather,16,16");
}

TEST_CASE("a sweep of op points runs on every core by default, in sweep order, a workload sweep in one process", "[sweep][cli]") {
  tilesim_test::TempDir dir("default-jobs");
  CHECK(runs::sweep::default_jobs() == std::min<std::int64_t>(host_cores_available(), limits::max_jobs));
  const std::string sweep = dir.write("s.json", R"({"name": "s", "ops": ["gather"], "sizes": {"num_inputs": [16],
      "num_features": [16], "num_outputs": {"from": 32, "to": 4096, "times": 2}}, "backends": ["gpu-model:a100-40gb"]})");
  const auto r = tilesim_test::run_tilesim("sweep " + sweep + " --out " + dir.path("out"), dir.dir());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  if (runs::sweep::default_jobs() > 1) CHECK_THAT(r.err, Catch::Contains("worker processes (this host's cores"));
  const auto echo = nlohmann::json::parse(tilesim_test::slurp(dir.path("out/sweep.json")));
  CHECK(echo.at("run").at("jobs") == runs::sweep::default_jobs());
  CHECK(outputs_in_file(dir.path("out/results.csv")) == std::vector<std::int64_t>{32, 64, 128, 256, 512, 1024, 2048, 4096});

  const std::string workload_sweep = dir.write("w.json", R"({"name": "w", "workload": {"name": "g", "ops": [{"op": "gather",
      "num_inputs": 16, "num_features": 8, "num_outputs": 32}]}, "axes": {"ops[0].num_outputs": [32, 64]},
      "backends": ["gpu-model:a100-40gb"]})");
  const auto w = tilesim_test::run_tilesim("sweep " + workload_sweep + " --out " + dir.path("w"), dir.dir());
  INFO(w.err);
  CHECK(w.exit_code == 0);
}
