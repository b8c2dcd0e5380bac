// What-if machines end to end: `tilesim run` on a machine named with overrides, and a sweep over
// machine figures, each point's machine in its row with its own hash; a what-if the model refuses is
// bad input before any point runs.
#include <set>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "analysis/results_table.hpp"
#include "tests/support/test_support.hpp"

using namespace tilesim_test;
using Catch::Matchers::Contains;

namespace {

const fs::path& what_if_dir() {
  static const fs::path d = scratch("what_if_cli_test");
  return d;
}

}  // namespace

TEST_CASE("sweep over machine figures: the clock scales time at equal cycles, each machine hashed", "[sweep][cli]") {
  const fs::path sweep = write_text(what_if_dir() / "clock.json", R"({"name": "clock", "ops": ["gather", "scatter_add"],
      "sizes": {"num_inputs": [256], "num_features": [16, 64], "num_outputs": [2048]},
      "backends": [{"backend": "ipu:bow", "machine": {"chip.tile_clock_hz": {"scale": [1, 2]}}}, "gpu-model:a100-40gb"]})");
  const fs::path out = what_if_dir() / "clock_out";
  const CliResult r = run_tilesim("sweep " + sweep.string() + " --out " + out.string() + " --overwrite", what_if_dir());
  REQUIRE(r.exit_code == 0);
  const auto rows = tilesim::analysis::read_results_csv((out / "results.csv").string());
  REQUIRE(rows.size() == 12);
  std::map<std::string, std::map<std::string, const tilesim::analysis::ResultRow*>> by_point;  // point -> backend -> row
  std::set<std::string> hashes;
  for (const auto& row : rows) {
    const std::string point = row.op + "/" + std::to_string(row.shape.num_features);
    by_point[point][row.backend] = &row;
    CHECK_THAT(row.machine_hash, Catch::Matchers::StartsWith("sha256:"));
    hashes.insert(row.backend + " " + row.machine_hash);
  }
  CHECK(hashes.size() == 3);  // one hash per backend, three backends
  for (const auto& [point, backends] : by_point) {
    INFO(point);
    const auto* base = backends.at("ipu:bow{chip.tile_clock_hz*=1}");
    const auto* fast = backends.at("ipu:bow{chip.tile_clock_hz*=2}");
    CHECK(*base->cycles == *fast->cycles);
    CHECK(*fast->time_s == Approx(*base->time_s / 2).epsilon(1e-9));
    CHECK(fast->machine == "bow{chip.tile_clock_hz*=2}");
  }
  const nlohmann::json machines = nlohmann::json::parse(slurp(out / "machines.json"));
  CHECK_THAT(machines.dump(), Contains("what-if: chip.tile_clock_hz*=2"));

  // The sensitivity plot: twice the clock, half the time at every point; the GPU rows (no what-if) aside.
  const fs::path plots = what_if_dir() / "clock_plots";
  const CliResult plot = run_tilesim("plot sensitivity " + (out / "results.csv").string() + " --out " + plots.string(), what_if_dir());
  REQUIRE(plot.exit_code == 0);
  CHECK_THAT(plot.out, Contains("chip.tile_clock_hz"));
  CHECK_THAT(plot.out, Contains("0.500  0.500 - 0.500 (2)"));
  CHECK(plot.out.find("gpu-model") == std::string::npos);
  CHECK(fs::exists(plots / "tornado_ipu_bow.svg"));
  CHECK(fs::exists(plots / "sensitivity_chip.tile_clock_hz.pdf"));
}

TEST_CASE("tilesim run on a what-if machine, and a what-if the model refuses, said before anything runs", "[sweep][cli]") {
  const fs::path workload = write_text(what_if_dir() / "g.json",
                                       R"({"name": "g", "ops": [{"op": "gather", "num_inputs": 512, "num_features": 32, "num_outputs": 4096}]})");
  const fs::path out = what_if_dir() / "run_out";
  const CliResult r = run_tilesim("run " + workload.string() + " --timing-only --backends 'ipu:bow,ipu:bow{chip.sram_bytes_per_tile*=2}' --out " +
                                      out.string(),
                                  what_if_dir());
  REQUIRE(r.exit_code == 0);
  const nlohmann::json report = nlohmann::json::parse(slurp(out / "report.json"));
  REQUIRE(report["results"].size() == 2);
  CHECK(report["results"][1]["backend"] == "ipu:bow{chip.sram_bytes_per_tile*=2}");
  CHECK(report["results"][1]["machine_provenance"]["content_hash"] != report["results"][0]["machine_provenance"]["content_hash"]);

  const CliResult bad = run_tilesim("run " + workload.string() + " --timing-only --backends 'ipu:bow{chip.sram_bytes=1}' --out " +
                                        (what_if_dir() / "bad_out").string(),
                                    what_if_dir());
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Contains("chip.sram_bytes: expected a figure of the IPU machine"));
  const fs::path sweep = write_text(what_if_dir() / "bad.json", R"({"name": "bad", "ops": ["gather"],
      "sizes": {"num_inputs": [256], "num_features": [16], "num_outputs": [2048]},
      "backends": [{"backend": "ipu:bow", "machine": {"chip.worker_contexts": [6, 0]}}]})");
  const CliResult bad_sweep = run_tilesim("sweep " + sweep.string() + " --out " + (what_if_dir() / "bad_sweep").string(), what_if_dir());
  CHECK(bad_sweep.exit_code == 2);
  CHECK_THAT(bad_sweep.err, Contains("chip.worker_contexts"));
  CHECK_FALSE(fs::exists(what_if_dir() / "bad_sweep" / "results.csv"));
}
