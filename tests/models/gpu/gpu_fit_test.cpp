// The GPU model's calibration-split fit (models/gpu/gpu_fit.hpp), on synthetic data the model generated
// itself, and `tilesim calibrate-model --gpu` through the CLI.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "fitting/split.hpp"
#include "models/gpu/gpu_fit.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/gpu/gpu_model.hpp"
#include "tests/support/gpu_model_cases.hpp"

using namespace tilesim;
using namespace tilesim::gpu;
using namespace tilesim_test::gpu_cases;
namespace fs = std::filesystem;

namespace {

using tilesim_test::slurp;

using tilesim_test::CliResult;

}  // namespace

TEST_CASE("the fit uses the calibration half only and recovers the parameters of synthetic data", "[gpu][fit][unit]") {
  // Synthetic eager times from the model itself with known figures on a small grid; the held-out half
  // is corrupted tenfold, so any use of it by the fit would show.
  GpuMachine truth = load_gpu_machine("a100-40gb");
  auto& t = truth.calibration;
  t.host_gather_s = 10e-6;
  t.host_scatter_add_s = 30e-6;
  t.host_scatter_max_min_s = 50e-6;
  t.host_zero_fill_s = t.host_gather_s;
  t.launch_latency_s = 3e-6;
  t.dram_efficiency = 0.8;
  t.l2_efficiency = 0.4;
  t.gather_elements_per_sm_cycle = 0.5;
  t.atomic_add_elements_per_sm_cycle = 0.4;
  t.atomic_cas_elements_per_sm_cycle = 0.3;
  t.contended_cas_retries_per_sm_cycle = 3;

  std::vector<GpuMeasurement> points;
  for (GpuOp op : {GpuOp::gather, GpuOp::scatter_add, GpuOp::scatter_max, GpuOp::scatter_min}) {
    for (std::int64_t ni : {16, 256, 4096}) {
      for (std::int64_t nf : {16, 64, 256, 512}) {
        for (std::int64_t no : {32, 512, 4096, 16384, 32768}) {
          const OpShape s = shape(ni, nf, no);
          const double time_s = time_of(op, s, truth, GpuMode::eager);
          points.push_back({op, s, fitting::in_calibration_split(s) ? time_s : 10 * time_s});
        }
      }
    }
  }
  GpuFitOptions options;
  options.significant_digits = 6;
  const GpuFitResult fit = fit_gpu_model(points, load_gpu_machine("a100-40gb"), options);
  CHECK(fit.calibration_objective < 1e-3);
  CHECK(fit.calibration_objective < fit.start_objective);
  REQUIRE(fit.ops.size() == 4);
  std::size_t calibration_points = 0;
  for (const auto& p : points) calibration_points += fitting::in_calibration_split(p.shape) ? 1 : 0;
  for (const auto& e : fit.errors) {
    CHECK(e.calibration.count == calibration_points / 4);
    CHECK(e.held_out.count == (points.size() - calibration_points) / 4);
    CHECK(e.calibration.median_ape_pct < 0.1);
    CHECK(e.held_out.median_ape_pct > 80);  // the corrupted half: 10x the model
  }
  // Every figure that shapes these points comes back.
  const auto& f = fit.calibration;
  CHECK(f.host_gather_s == Approx(t.host_gather_s).epsilon(0.01));
  CHECK(f.host_scatter_add_s == Approx(t.host_scatter_add_s).epsilon(0.01));
  CHECK(f.host_scatter_max_min_s == Approx(t.host_scatter_max_min_s).epsilon(0.01));
  CHECK(f.host_zero_fill_s == f.host_gather_s);
  CHECK(f.launch_latency_s == Approx(t.launch_latency_s).epsilon(0.03));
  CHECK(f.dram_efficiency == Approx(t.dram_efficiency).epsilon(0.03));
  CHECK(f.l2_efficiency == Approx(t.l2_efficiency).epsilon(0.03));
  CHECK(f.gather_elements_per_sm_cycle == Approx(t.gather_elements_per_sm_cycle).epsilon(0.03));
  CHECK(f.atomic_add_elements_per_sm_cycle == Approx(t.atomic_add_elements_per_sm_cycle).epsilon(0.03));
  CHECK(f.atomic_cas_elements_per_sm_cycle == Approx(t.atomic_cas_elements_per_sm_cycle).epsilon(0.03));
  CHECK(f.contended_cas_retries_per_sm_cycle == Approx(t.contended_cas_retries_per_sm_cycle).epsilon(0.03));

  // Fitting a subset of the figures leaves the others where they started.
  GpuFitOptions some;
  some.free = {"gather"};
  some.start = t;
  some.start->host_gather_s = 20e-6;
  const GpuFitResult partial = fit_gpu_model(points, truth, some);
  CHECK(partial.fitted == std::vector<std::string>{"gather"});
  CHECK(partial.calibration.host_gather_s == Approx(t.host_gather_s).epsilon(0.01));
  CHECK(partial.calibration.launch_latency_s == t.launch_latency_s);
  some.free = {"no_such_figure"};
  CHECK_THROWS_AS(fit_gpu_model(points, truth, some), InputError);
  some.free = {"zero_fill"};
  CHECK_THROWS_AS(fit_gpu_model(points, truth, some), InputError);
}

TEST_CASE("tilesim calibrate-model fits, reports both halves and writes a machine file", "[gpu][cli][fit][slow]") {
  auto r = tilesim_cli("calibrate-model --gpu a100-40gb --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["errors"].size() == 4);
  for (const auto& e : j["errors"]) {
    INFO(e["op"]);
    CHECK(e["calibration"]["count"] == 297);
    CHECK(e["held_out"]["count"] == 297);
    CHECK(e["held_out"]["median_ape_pct"].get<double>() <= 5.0);
    CHECK(e["held_out"]["p90_ape_pct"].get<double>() <= 15.0);
  }
  CHECK(j["written"].empty());
  // Refitting reproduces the shipped figures (the fit is deterministic).
  const GpuMachine shipped = load_gpu_machine("a100-40gb");
  for (const auto& f : calibration_figures()) CHECK(j["fitted"][f.key].get<double>() == shipped.calibration.*(f.member));

  // --write on a copy rewrites only that copy, keeping every other figure.
  const fs::path copy = gpu_dir() / "my-a100.json";
  auto doc = nlohmann::ordered_json::parse(slurp(shipped.file));
  doc["kernels"]["launch_latency_s"]["value"] = 1e-3;
  doc["kernels"]["launch_latency_s"]["source"] = "a wrong guess";
  std::ofstream(copy) << doc.dump(2);
  const std::string before_80gb = slurp(load_gpu_machine("a100-80gb").file);
  auto w = tilesim_cli("calibrate-model --gpu " + copy.string() + " --write");
  INFO(w.err);
  REQUIRE(w.exit_code == 0);
  CHECK_THAT(w.out, Catch::Contains("held-out") && Catch::Contains("wrote " + copy.string()));
  const GpuMachine rewritten = load_gpu_machine(copy.string());
  CHECK(rewritten.calibration.launch_latency_s == shipped.calibration.launch_latency_s);
  CHECK_THAT(rewritten.provenance.figure("kernels.launch_latency_s").source, Catch::Contains("fitted by"));
  CHECK(rewritten.provenance.figures_json()["chip"] == shipped.provenance.figures_json()["chip"]);
  CHECK(slurp(load_gpu_machine("a100-80gb").file) == before_80gb);

  // A machine whose fit is carried over is not fitted on A100 data.
  auto carried = tilesim_cli("calibrate-model --gpu h100-sxm");
  CHECK(carried.exit_code == 2);
  CHECK_THAT(carried.err, Catch::Contains("fit_carried_over_from") && Catch::Contains("a100-40gb"));
  // Nor is one that inherits its fitted figures from a base: refitting the base carries over to it.
  auto inherited = tilesim_cli("calibrate-model --gpu a100-80gb");
  CHECK(inherited.exit_code == 2);
  CHECK_THAT(inherited.err, Catch::Contains("a100-80gb.json") && Catch::Contains("inherited from") &&
                                Catch::Contains("a100-40gb.json"));
  auto no_data = tilesim_cli("calibrate-model --gpu a100-40gb --data " + (gpu_dir() / "nowhere").string());
  CHECK(no_data.exit_code == 2);
  CHECK_THAT(no_data.err, Catch::Contains("nowhere"));
}
