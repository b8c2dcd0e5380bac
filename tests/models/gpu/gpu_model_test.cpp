// The analytic GPU model: machine files, hand-computed predictions, the structure of the modes, the
// calibration-split fit (on synthetic data the model generated itself) and the error bounds on a fixed
// subset of the held-out A100 measurements; the gpu-model backend and calibrate-model through the CLI.
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

#include "analysis/reference_data.hpp"
#include "common/error.hpp"
#include "common/strict_json.hpp"
#include "fitting/error_metrics.hpp"
#include "fitting/split.hpp"
#include "models/gpu/gpu_fit.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/gpu/gpu_backend.hpp"
#include "models/gpu/gpu_model.hpp"
#include "workloads/layers/layers.hpp"

using namespace tilesim;
using namespace tilesim::gpu;
namespace fs = std::filesystem;

namespace {

const std::vector<GpuOp> kAllOps = {GpuOp::gather, GpuOp::scatter_add, GpuOp::scatter_max, GpuOp::scatter_min,
                                    GpuOp::zero_fill};

fs::path gpu_dir() {
  static const fs::path dir = tilesim_test::scratch("gpu_test");
  return dir;
}

using tilesim_test::slurp;

using tilesim_test::CliResult;

CliResult tilesim_cli(const std::string& args) { return tilesim_test::run_tilesim(args, gpu_dir()); }

// A machine with round calibration figures, so expected times can be worked out by hand.
GpuMachine round_machine() {
  GpuMachine m = load_gpu_machine("a100-40gb");
  m.sm_count = 100;
  m.sm_clock_hz = 1e9;            // 1e11 SM cycles per second
  m.max_threads_per_sm = 2000;    // 200,000 resident threads
  m.hbm_bytes_per_s = 2e12;
  m.l2_bytes = 40'000'000;
  m.l2_bytes_per_s = 8e12;
  m.fp32_flops_per_s = 2e13;
  m.index_bytes = 8;
  m.same_address_atomic_add_s = 1e-8;
  auto& c = m.calibration;
  c.host_gather_s = 9e-6;
  c.host_scatter_add_s = 25e-6;
  c.host_scatter_max_min_s = 44e-6;
  c.host_zero_fill_s = 9e-6;
  c.launch_latency_s = 2e-6;
  c.dram_efficiency = 0.5;    // 1e12 B/s achieved
  c.l2_efficiency = 0.25;     // 2e12 B/s achieved
  c.gather_elements_per_sm_cycle = 1.0;      // 1e11 elements/s
  c.atomic_add_elements_per_sm_cycle = 2.0;  // 2e11 /s
  c.atomic_cas_elements_per_sm_cycle = 0.5;  // 5e10 /s
  c.contended_cas_retries_per_sm_cycle = 4;  // 4e11 /s
  m.pcie_bytes_per_s = 1e10;
  m.gemm.efficiency = 0.5;  // a tile runs at 2e13 / 100 SMs x 0.5 = 1e11 FLOP/s on its SM
  m.gemm.cublas_tile_rows = 128;
  m.gemm.cublas_tile_cols = 64;
  m.gemm.grouped_tile_rows = 128;
  m.gemm.grouped_tile_cols = 64;
  m.gemm.split_k_min_depth = 256;
  m.eager.aten_call_s = 5e-6;
  m.eager.segment_matmul_call_s = 30e-6;
  m.eager.segment_matmul_per_segment_s = 1e-6;
  m.eager.optimizer_step_call_s = 100e-6;
  m.eager.optimizer_per_parameter_s = 10e-6;
  m.eager.autograd_backward_node_s = 7e-6;
  // PyTorch 2.x's torch.optim defaults: foreach updates, zero_grad(set_to_none=True). The shipped files
  // describe 1.x stacks; the per-parameter loop has its own test.
  m.framework.optimizer = GpuMachine::Framework::Optimizer::foreach;
  m.framework.zero_grad_fills = false;
  return m;
}

OpShape shape(std::int64_t ni, std::int64_t nf, std::int64_t no) { return OpShape{ni, nf, no}; }

double time_of(GpuOp op, const OpShape& s, const GpuMachine& m, GpuMode mode) {
  return predict(op, s, DType::float32, m, mode).time_s;
}

// Every figure of a machine as resolved (its file merged with its bases): an object of exactly "value"
// (a number) and a non-empty "source".
void check_every_figure_has_a_source(const nlohmann::json& doc) {
  for (const char* section : {"chip", "peak_flops_per_s", "software", "kernels", "gemm", "eager_host_floor_s"}) {
    REQUIRE(doc.contains(section));
    for (const auto& [key, figure] : doc[section].items()) {
      INFO(section << "." << key);
      CHECK(figure.size() == 2);
      CHECK(figure["value"].is_number());
      CHECK(!figure["source"].get<std::string>().empty());
    }
  }
  // The software stack's figures are words, each with its source too.
  REQUIRE(doc.contains("framework"));
  for (const char* key : {"pytorch", "host_cpu", "optimizer", "zero_grad"}) {
    INFO("framework." << key);
    CHECK(doc["framework"][key]["value"].is_string());
    CHECK(!doc["framework"][key]["source"].get<std::string>().empty());
  }
}

}  // namespace

TEST_CASE("GPU machine files load with every figure and its source", "[gpu][machine][unit]") {
  const auto names = shipped_gpu_machines();
  CHECK(std::set<std::string>(names.begin(), names.end()) ==
        std::set<std::string>{"a100-40gb", "a100-80gb", "h100-sxm", "h200", "v100-16gb"});
  const GpuMachine a100 = load_gpu_machine("a100-40gb");
  for (const auto& name : names) {
    INFO(name);
    const auto m = load_gpu_machine(name);
    CHECK(m.name == name);
    check_every_figure_has_a_source(m.provenance.figures_json());
    CHECK(m.index_bytes == 8);
    CHECK(m.max_threads_per_sm == 2048);
    if (name == "a100-40gb") {
      CHECK(m.fit_carried_over_from.empty());
      for (const auto& f : calibration_figures()) {
        INFO(f.key);
        const std::string source = m.provenance.figure(std::string(f.section) + "." + f.key).source;
        CHECK_THAT(source, Catch::Contains("tilesim calibrate-model --gpu a100-40gb"));
        // The zero-fill floor is set from the gather floor, not fitted (no data calls torch.zeros alone).
        if (std::string(f.key) != "zero_fill") CHECK_THAT(source, Catch::Contains("calibration half") && Catch::Contains("a89c2e4"));
      }
    } else {
      // The fit carries over: same fitted figures, own vendor figures, and the sources say so. A file
      // deriving from a100-40gb inherits the fitted figures from its file, sources and all; a file that
      // copies them (fit_carried_over_from, stated there or in a base) says "carried over".
      for (const auto& f : calibration_figures()) {
        INFO(f.key);
        CHECK(m.calibration.*(f.member) == a100.calibration.*(f.member));
        const std::string path = std::string(f.section) + "." + f.key;
        const MachineFigure& figure = m.provenance.figure(path);
        if (figure.file == a100.file) {
          CHECK(m.fit_carried_over_from.empty());
          CHECK(figure.source == a100.provenance.figure(path).source);
        } else {
          CHECK(m.fit_carried_over_from == "a100-40gb");
          CHECK_THAT(figure.source, Catch::StartsWith("carried over from the a100-40gb fit"));
        }
      }
    }
  }
  CHECK(a100.sm_count == 108);
  CHECK(a100.hbm_bytes_per_s == 1.555e12);
  CHECK(a100.l2_bytes == 40 * 1024 * 1024);
  CHECK(load_gpu_machine("a100-80gb").hbm_bytes_per_s == 2.039e12);
  CHECK(load_gpu_machine("h100-sxm").sm_count == 132);
  CHECK(load_gpu_machine("h100-sxm").hbm_bytes_per_s == 3.35e12);
  CHECK(load_gpu_machine("h200").hbm_bytes_per_s == 4.8e12);
  CHECK(load_gpu_machine("v100-16gb").sm_count == 80);
  CHECK(load_gpu_machine("v100-16gb").hbm_bytes_per_s == 9e11);
  // The zero-fill floor is not fitted: it follows the gather floor.
  CHECK(a100.calibration.host_zero_fill_s == a100.calibration.host_gather_s);
}

TEST_CASE("bad GPU machine files are rejected naming the file and JSON path", "[gpu][machine][unit]") {
  const auto good = load_json_file(load_gpu_machine("a100-40gb").file);
  auto doc = good;
  doc["chip"]["sm_count"] = 108;  // a bare number: no source
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Catch::Contains("g.json: chip.sm_count"));
  doc = good;
  doc["chip"]["hbm_bytes_per_s"].erase("source");
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"),
                    Catch::Contains("g.json: chip.hbm_bytes_per_s.source") && Catch::Contains("required"));
  doc = good;
  doc["kernels"]["dram_eficiency"] = {{"value", 0.9}, {"source", "typo"}};
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Catch::Contains("kernels.dram_eficiency") && Catch::Contains("unknown key"));
  doc = good;
  doc["kernels"]["dram_efficiency"]["value"] = 1.2;  // no kernel beats the vendor peak
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Catch::Contains("kernels.dram_efficiency.value"));
  doc = good;
  doc["eager_host_floor_s"]["gather"]["value"] = "8.8us";
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Catch::Contains("eager_host_floor_s.gather.value") && Catch::Contains("\"8.8us\""));
  doc = good;
  doc["gemm"].erase("efficiency");
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Catch::Contains("g.json: gemm.efficiency") && Catch::Contains("required"));
  doc = good;
  doc["gemm"]["grouped_tile_rows"]["value"] = 0;
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Catch::Contains("gemm.grouped_tile_rows.value"));
  doc = good;
  doc["eager_host_floor_s"].erase("aten_call");
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Catch::Contains("eager_host_floor_s.aten_call"));
  doc = good;
  doc.erase("peak_flops_per_s");
  CHECK_THROWS_WITH(parse_gpu_machine(doc, "g.json"), Catch::Contains("peak_flops_per_s"));
  CHECK_THROWS_AS(load_gpu_machine("a100"), InputError);
  CHECK_THROWS_WITH(load_gpu_machine("a100"), Catch::Contains("a100-40gb, a100-80gb, h100-sxm, h200, v100-16gb"));
  const fs::path file = gpu_dir() / "broken.json";
  std::ofstream(file) << "{\"name\": \"x\",}";
  CHECK_THROWS_WITH(load_gpu_machine(file.string()), Catch::Contains(file.string()));
}

TEST_CASE("the L2 hit fraction is 1 while the footprint fits and random replacement beyond", "[gpu][model][unit]") {
  CHECK(l2_hit_fraction(10, 40) == 1.0);
  CHECK(l2_hit_fraction(40, 40) == 1.0);
  // h = exp(-(1 - h) * 2) has the root 0.2031878700 besides h = 1.
  CHECK(l2_hit_fraction(80, 40) == Approx(0.20318786997998006).epsilon(1e-9));
  CHECK(l2_hit_fraction(40.0001, 40) == Approx(1.0).margin(1e-3));
  CHECK(l2_hit_fraction(1000, 40) < 1e-9);
  double last = 1.0;
  for (double w = 40; w < 400; w *= 1.1) {
    const double h = l2_hit_fraction(w, 40);
    CHECK(h <= last);
    last = h;
  }
}

TEST_CASE("predictions equal hand-computed kernel times", "[gpu][model][formula]") {
  const GpuMachine m = round_machine();

  SECTION("zero fill in L2: launch + bytes / (L2 bandwidth x efficiency)") {
    // 1024 x 256 float32 = 1 MiB, fits L2: 2 us + 1,048,576 B / 2e12 B/s.
    const auto p = predict(GpuOp::zero_fill, shape(1, 256, 1024), DType::float32, m, GpuMode::kernel);
    CHECK(p.time_s == Approx(2e-6 + 1048576 / 2e12));
    CHECK(p.l2_hit_fraction == 1.0);
    CHECK(p.hbm_bytes == 0.0);
    CHECK(p.kernels.size() == 1);
  }
  SECTION("zero fill twice the L2: random replacement keeps 20.3% of it") {
    GpuMachine small = m;
    small.l2_bytes = 4096 * 512 * 4 / 2;  // half the 8 MiB output
    const double bytes = 4096.0 * 512 * 4, h = 0.20318786997998006;
    const auto p = predict(GpuOp::zero_fill, shape(1, 512, 4096), DType::float32, small, GpuMode::kernel);
    CHECK(p.time_s == Approx(2e-6 + bytes * h / 2e12 + bytes * (1 - h) / 1e12).epsilon(1e-9));
    CHECK(p.hbm_bytes == Approx(bytes * (1 - h)));
    CHECK(p.limiter == "dram");
  }
  SECTION("gather bound by the element rate") {
    // 32768 x 512 output elements at 1e11 /s = 167.77 us; its 64 MiB + 32 KiB + 256 KiB of traffic
    // would take at most 68 us from DRAM.
    const auto p = predict(GpuOp::gather, shape(16, 512, 32768), DType::float32, m, GpuMode::kernel);
    CHECK(p.time_s == Approx(2e-6 + 32768.0 * 512 / 1e11));
    CHECK(p.limiter == "element_rate");
    // Rows: the 16-row table fits L2, so each distinct row is read once.
    CHECK(p.l2_bytes == Approx(32768.0 * 8 + 16.0 * 512 * 4 + 32768.0 * 512 * 4));
  }
  SECTION("scatter_add: fill + atomics, the index an expanded view") {
    // 4096 x 64 messages into 1024 rows, footprint 1 MiB + 32 KiB + 256 KiB fits L2 (2e12 B/s).
    const double messages = 4096.0 * 64, out = 1024.0 * 64;
    const double fill_s = 2e-6 + out * 4 / 2e12;
    const double traffic = messages * 4 + 4096.0 * 8 + 2 * out * 4;
    const double scatter_s = 2e-6 + std::max({messages / 2e11, traffic / 2e12, 4.0 * 1e-8});
    const auto p = predict(GpuOp::scatter_add, shape(4096, 64, 1024), DType::float32, m, GpuMode::kernel);
    CHECK(p.time_s == Approx(fill_s + scatter_s));
    CHECK(p.kernels.size() == 2);
    CHECK(p.flops == messages);
  }
  SECTION("scatter_max: six kernels and CAS retries when every update of an address is in flight") {
    // 4096 x 16 messages into 32 x 16 outputs: 128 updates per address, 200,000 resident threads /
    // 512 outputs = 390 contenders -> capped at 128: each update retries 127 times at 4e11 /s.
    const double messages = 4096.0 * 16, out = 32.0 * 16, bw = 2e12;
    const double fill_arg = 2e-6 + out * 8 / bw, fill_out = 2e-6 + out * 4 / bw;
    const double cas = 2e-6 + std::max(messages / 5e10, (messages * 4 + 4096.0 * 8 + 2 * out * 4) / bw) + messages * 127 / 4e11;
    const double eq = 2e-6 + out * 5 / bw, masked = 2e-6 + out * 9 / bw;
    const double arg = 2e-6 + std::max(messages / 1e11, (messages * 4 + 4096.0 * 8 + out * 12) / bw);
    const auto p = predict(GpuOp::scatter_max, shape(4096, 16, 32), DType::float32, m, GpuMode::kernel);
    CHECK(p.kernels.size() == 6);
    CHECK(p.time_s == Approx(fill_arg + fill_out + cas + eq + masked + arg));
    CHECK(p.limiter == "contention");
    CHECK(time_of(GpuOp::scatter_min, shape(4096, 16, 32), m, GpuMode::kernel) == p.time_s);
  }
  SECTION("eager is the larger of the host floor and the kernels") {
    const auto small = predict(GpuOp::gather, shape(16, 16, 32), DType::float32, m, GpuMode::eager);
    CHECK(small.time_s == 9e-6);
    CHECK(small.host_floor_s == 9e-6);
    CHECK(small.limiter == "host");
    const auto big = predict(GpuOp::gather, shape(16, 512, 32768), DType::float32, m, GpuMode::eager);
    CHECK(big.time_s == Approx(2e-6 + 32768.0 * 512 / 1e11));
    CHECK(big.limiter == "element_rate");
  }
}

TEST_CASE("kernel mode is below eager, eager sits on the host floor at small sizes", "[gpu][model][unit]") {
  for (const auto& name : shipped_gpu_machines()) {
    const GpuMachine m = load_gpu_machine(name);
    for (GpuOp op : kAllOps) {
      INFO(name << " " << to_string(op));
      const auto tiny = predict(op, shape(16, 16, 32), DType::float32, m, GpuMode::eager);
      CHECK(tiny.time_s == tiny.host_floor_s);
      CHECK(tiny.limiter == "host");
      for (std::int64_t ni : {16, 512, 4096}) {
        for (std::int64_t nf : {16, 128, 512}) {
          for (std::int64_t no : {32, 2048, 32768}) {
            const auto k = predict(op, shape(ni, nf, no), DType::float32, m, GpuMode::kernel);
            const auto e = predict(op, shape(ni, nf, no), DType::float32, m, GpuMode::eager);
            CHECK(k.time_s > 0);
            CHECK(k.time_s <= e.time_s);
            CHECK(k.time_s >= m.calibration.launch_latency_s * static_cast<double>(k.kernels.size()));
            CHECK(e.kernel_s == k.kernel_s);
          }
        }
      }
    }
  }
  // A bigger chip is not slower on the kernels (same fitted rates, more SMs and bandwidth).
  const GpuMachine a100 = load_gpu_machine("a100-40gb"), h100 = load_gpu_machine("h100-sxm");
  for (GpuOp op : kAllOps) {
    CHECK(time_of(op, shape(4096, 512, 32768), h100, GpuMode::kernel) < time_of(op, shape(4096, 512, 32768), a100, GpuMode::kernel));
  }
}

TEST_CASE("more bytes never take less time", "[gpu][model][unit]") {
  // Wider rows for every op; more output rows for gather and zero fill; more messages for the scatters.
  // (More output rows can make a scatter faster: fewer updates collide per address, as measured.)
  const GpuMachine m = load_gpu_machine("a100-40gb");
  for (GpuMode mode : {GpuMode::kernel, GpuMode::eager}) {
    for (GpuOp op : kAllOps) {
      for (std::int64_t a = 16; a <= 4096; a *= 4) {
        for (std::int64_t b = 32; b <= 32768; b *= 8) {
          INFO(to_string(op) << " " << to_string(mode) << " " << a << " " << b);
          double last = 0;
          for (std::int64_t nf = 16; nf <= 1024; nf *= 2) {
            const double t = time_of(op, shape(a, nf, b), m, mode);
            CHECK(t >= last);
            last = t;
          }
          last = 0;
          for (std::int64_t n = 32; n <= 65536; n *= 2) {
            const bool grow_outputs = op == GpuOp::gather || op == GpuOp::zero_fill;
            const double t = grow_outputs ? time_of(op, shape(a, 64, n), m, mode) : time_of(op, shape(n, 64, b), m, mode);
            CHECK(t >= last);
            last = t;
          }
        }
      }
    }
  }
}

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

TEST_CASE("A100 eager error bounds on a fixed subset of the held-out measurements", "[gpu][validation]") {
  // Every third held-out point of each file (99 per op), predicted with the shipped a100-40gb file.
  // The full held-out half (tilesim calibrate-model) gives median 1.4-3.0% and p90 8.3-10.7%.
  const GpuMachine m = load_gpu_machine("a100-40gb");
  const std::string dir = std::string(TILESIM_SOURCE_DIR) + "/validation/hydronet-gnn/a100/";
  const std::vector<std::pair<const char*, GpuOp>> files = {
      {"gather", GpuOp::gather}, {"scatter_add", GpuOp::scatter_add}, {"scatter_max", GpuOp::scatter_max}, {"scatter_min", GpuOp::scatter_min}};
  for (const auto& [file, op] : files) {
    INFO(file);
    std::vector<double> predicted, measured;
    std::size_t held_out = 0;
    for (const auto& point : analysis::read_hydronet_csv(dir + file + ".csv", file)) {
      if (fitting::in_calibration_split(point.shape)) continue;
      if (held_out++ % 3 != 0) continue;
      predicted.push_back(time_of(op, point.shape, m, GpuMode::eager));
      measured.push_back(point.time_s);
    }
    const auto e = fitting::summarize_errors(predicted, measured, 3);
    // Achieved on this subset: median 1.4 / 1.8 / 2.9 / 3.1%, p90 9.1 / 9.4 / 9.0 / 8.5% (gather,
    // scatter_add, scatter_max, scatter_min); the targets are 5% and 15%.
    CHECK(e.count == 99);
    CHECK(e.median_ape_pct <= 4.0);
    CHECK(e.p90_ape_pct <= 11.0);
    CHECK(std::abs(e.bias_pct) <= 3.0);
    // scatter_add is left out: all but a few of its points sit on the host floor, where the measured
    // spread (25-29 us) is run-to-run noise, so log times barely correlate whatever the model does.
    if (op != GpuOp::scatter_add) CHECK(e.pearson_log_r.value_or(0) >= 0.98);
  }
}

TEST_CASE("tilesim run with the gpu-model backend reports modeled times", "[gpu][cli]") {
  const std::string small = std::string(TILESIM_SOURCE_DIR) + "/workloads/examples/small.json";
  const fs::path out = gpu_dir() / "run";
  auto r = tilesim_cli("run " + small + " --backends gpu-model:a100-40gb:eager,gpu-model:h100-sxm --json --out " + out.string());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out);
  REQUIRE(report["results"].size() == 2);
  const auto& eager = report["results"][0];
  CHECK(eager["backend"] == "gpu-model:a100-40gb:eager");
  CHECK(eager["kind"] == "modeled");
  CHECK(eager["machine"] == "a100-40gb");
  CHECK(eager["host"]["mode"] == "eager");
  CHECK_THAT(eager["host"]["machine_file"].get<std::string>(), Catch::EndsWith("models/gpu/machines/a100-40gb.json"));
  const GpuMachine a100 = load_gpu_machine("a100-40gb");
  REQUIRE(eager["ops"].size() == 2);
  // small.json's ops are tiny: both sit on their eager host floors.
  CHECK(eager["ops"][0]["time_s"].get<double>() == Approx(a100.calibration.host_gather_s));
  CHECK(eager["ops"][1]["time_s"].get<double>() == Approx(a100.calibration.host_scatter_add_s));
  for (const auto& op : eager["ops"]) {
    CHECK(op["verified"].is_null());
    CHECK(op["verification"] == "modeled: no outputs computed");
    CHECK(op["bytes_by_level"].contains("hbm_bytes"));
    CHECK(op["min_bytes"].get<std::int64_t>() > 0);
  }
  CHECK(eager["ops"][1]["flops"].get<double>() == 32.0 * 16);
  const auto& kernel = report["results"][1];
  CHECK(kernel["backend"] == "gpu-model:h100-sxm");
  CHECK(kernel["host"]["mode"] == "kernel");
  CHECK(kernel["ops"][0]["time_s"].get<double>() < eager["ops"][0]["time_s"].get<double>());

  auto bad = tilesim_cli("run " + small + " --backends gpu-model:a100 --out " + out.string());
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("unknown GPU machine \"a100\""));
  bad = tilesim_cli("run " + small + " --backends gpu-model: --out " + out.string());
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--backends") && Catch::Contains("gpu-model:MACHINE"));
  bad = tilesim_cli("run " + small + " --backends gpu-model:a100-40gb,gpu-model:a100-40gb:kernel --out " + out.string());
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("each backend once"));

  auto machines = tilesim_cli("machines");
  CHECK(machines.exit_code == 0);
  CHECK_THAT(machines.out, Catch::Contains("gpu-model:a100-40gb") && Catch::Contains("gpu-model:h200"));
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

// ---- The op kinds beyond the calibrated gather/scatter: matmul, segment_matmul, elementwise,
// scatter_mean, degree_count (predict_op), and the backend on a chained graph.

namespace {

// One op of `kind` over fresh graph-input tensors, built through OpGraph::add_op so its shapes are
// those the workloads produce.
struct OneOp {
  OpGraph graph;
  const Op& op() const { return graph.ops.back(); }
};

OneOp make_op(OpKind kind, OpShape s, bool bias = false, UnaryFn fn = UnaryFn::relu) {
  OneOp g;
  Op op;
  op.name = "op";
  op.kind = kind;
  op.shape = s;
  op.unary = fn;
  const auto f32 = [&](std::vector<std::int64_t> shape) { return g.graph.add_tensor({"t", shape, DType::float32}); };
  const auto i32 = [&](std::vector<std::int64_t> shape) { return g.graph.add_tensor({"i", shape, DType::int32}); };
  switch (kind) {
    case OpKind::gather: op.input = f32({s.num_inputs, s.num_features}); op.indices = i32({s.num_outputs}); break;
    case OpKind::scatter_add:
    case OpKind::scatter_mean:
    case OpKind::scatter_max: op.input = f32({s.num_inputs, s.num_features}); op.indices = i32({s.num_inputs}); break;
    case OpKind::degree_count: op.indices = i32({s.num_inputs}); break;
    case OpKind::matmul:
      op.input = f32({s.num_inputs, s.num_features});
      op.weight = f32({s.num_features, s.out_features});
      if (bias) op.bias = f32({s.out_features});
      break;
    case OpKind::segment_matmul:
      op.input = f32({s.num_inputs, s.num_features});
      op.indices = i32({s.num_segments + 1});
      op.weight = f32({s.num_segments, s.num_features, s.out_features});
      break;
    case OpKind::unary: op.input = f32({s.num_inputs, s.num_features}); break;
    case OpKind::binary:
      op.input = f32({s.num_inputs, s.num_features});
      op.weight = f32({s.other_rows, s.other_groups});
      break;
    default: FAIL("no GPU model case for " << to_string(kind));
  }
  g.graph.add_op(op);
  return g;
}

OpShape dense(std::int64_t rows, std::int64_t features, std::int64_t out_features = 0, std::int64_t segments = 0) {
  OpShape s;
  s.num_inputs = rows;
  s.num_features = features;
  s.out_features = out_features;
  s.num_segments = segments;
  return s;
}

// One op of every kind at a size scaled by `n` (rows) and `f` (features).
std::vector<OneOp> every_kind(std::int64_t n, std::int64_t f) {
  std::vector<OneOp> ops;
  ops.push_back(make_op(OpKind::gather, shape(n, f, 2 * n)));
  ops.push_back(make_op(OpKind::scatter_add, shape(4 * n, f, n)));
  ops.push_back(make_op(OpKind::scatter_mean, shape(4 * n, f, n)));
  ops.push_back(make_op(OpKind::scatter_max, shape(4 * n, f, n)));
  ops.push_back(make_op(OpKind::degree_count, shape(4 * n, 1, n)));
  ops.push_back(make_op(OpKind::matmul, dense(n, f, f), true));
  ops.push_back(make_op(OpKind::matmul, dense(n, f, 16)));
  ops.push_back(make_op(OpKind::segment_matmul, dense(n, f, f, 4)));
  for (UnaryFn fn : {UnaryFn::relu, UnaryFn::leaky_relu, UnaryFn::shifted_softplus, UnaryFn::exp, UnaryFn::scale,
                     UnaryFn::rsqrt_or_zero, UnaryFn::reciprocal_or_zero, UnaryFn::cosine_cutoff})
    ops.push_back(make_op(OpKind::unary, dense(n, f), false, fn));
  OpShape b = dense(n, f);
  b.other_rows = n;
  b.other_groups = 1;
  ops.push_back(make_op(OpKind::binary, b));
  return ops;
}

}  // namespace

TEST_CASE("every op kind is modeled: kernel <= eager, eager on its host floor when tiny", "[gpu][model][ops][unit]") {
  for (const auto& name : shipped_gpu_machines()) {
    const GpuMachine m = load_gpu_machine(name);
    for (std::int64_t n : {8, 4096, 65536}) {
      for (std::int64_t f : {8, 128}) {
        for (const OneOp& g : every_kind(n, f)) {
          const Op& op = g.op();
          INFO(name << " " << to_string(op.kind) << (op.kind == OpKind::unary ? " " + to_string(op.unary) : "") << " n=" << n << " f=" << f);
          const auto k = predict_op(op, m, GpuMode::kernel);
          const auto e = predict_op(op, m, GpuMode::eager);
          CHECK(k.time_s > 0);
          CHECK(k.time_s == k.kernel_s);
          CHECK(e.kernel_s == k.kernel_s);
          CHECK(e.time_s >= k.time_s);
          CHECK(e.time_s >= e.host_floor_s);
          CHECK(e.host_floor_s > 0);
          CHECK(!e.call.empty());
          CHECK(!k.limiter.empty());
          CHECK(k.time_s >= m.calibration.launch_latency_s * static_cast<double>(k.kernels.size()));
          if (n == 8 && f == 8) {
            // A tiny call costs its host floor alone (segment_matmul's host waits for the GPU, so
            // its kernels add to the floor).
            if (op.kind == OpKind::segment_matmul)
              CHECK(e.time_s == Approx(e.host_floor_s + k.kernel_s));
            else
              CHECK(e.time_s == e.host_floor_s);
            CHECK(e.limiter == "host");
          }
        }
      }
    }
  }
}

TEST_CASE("new op kinds equal hand-computed kernel times", "[gpu][model][ops][formula]") {
  const GpuMachine m = round_machine();  // launch 2 us, L2 2e12 B/s achieved, a tile at 1e11 FLOP/s per SM

  SECTION("a large matmul is bound by its tiles: 32 x 4 tiles of 128 x 64 are two waves on 100 SMs") {
    // 4096 x 512 @ 512 x 256 with bias: 13.1 MB, fits L2 (6.6 us); each tile 2*128*64*512 FLOPs at 1e11.
    const auto g = make_op(OpKind::matmul, dense(4096, 512, 256), true);
    const auto p = predict_op(g.op(), m, GpuMode::kernel);
    const double compute = 2 * (2.0 * 128 * 64 * 512) / 1e11;
    CHECK(p.time_s == Approx(2e-6 + compute));
    CHECK(p.limiter == "compute");
    REQUIRE(p.kernels.size() == 1);
    CHECK(p.kernels[0].name == "gemm_bias");
    CHECK(p.l2_bytes == Approx((4096.0 * 512 + 512.0 * 256 + 256 + 4096.0 * 256) * 4));
    CHECK(p.flops == g.op().flops());
    // Above the roofline: FLOPs at the full peak, bytes at the full L2 bandwidth.
    CHECK(p.time_s >= p.flops / m.fp32_flops_per_s);
  }
  SECTION("split-K: a small output over a long K is split to fill the SMs, then its partials are reduced") {
    // 64 x 50,000 x 64: one 64 x 64 tile. Split into min(100 SMs / 1 tile, 50,000 / 256) = 100 parts of
    // depth 500, one wave: each 2*64*64*500 FLOPs at 1e11. Operands 25.6 MB plus 100 partial outputs of
    // 16 KiB, within L2 (2e12 B/s); the reduction reads the partials and writes the output.
    CHECK(split_k_factor(1, 50000, m) == 100);
    CHECK(split_k_factor(100, 100000, m) == 1);  // the tiles fill the SMs
    CHECK(split_k_factor(3, 100000, m) == 33);
    CHECK(split_k_factor(1, 700, m) == 2);       // each split keeps at least 256 of K
    CHECK(split_k_factor(1, 255, m) == 1);
    const auto g = make_op(OpKind::matmul, dense(64, 50000, 64));
    const auto p = predict_op(g.op(), m, GpuMode::kernel);
    REQUIRE(p.kernels.size() == 2);
    CHECK(p.kernels[1].name == "splitk_reduce");
    CHECK(p.l2_hit_fraction == 1.0);
    const double out = 64.0 * 64 * 4, operands = (64.0 * 50000 + 50000.0 * 64) * 4;
    const double gemm = 2e-6 + std::max(2.0 * 64 * 64 * 500 / 1e11, (operands + 100 * out) / 2e12);
    const double reduce = 2e-6 + 101 * out / 2e12;
    CHECK(p.time_s == Approx(gemm + reduce));
    // Without the split the one tile would take 100 times its compute on one SM.
    CHECK(p.time_s < 2.0 * 64 * 64 * 50000 / 1e11);
  }
  SECTION("GEMM tiles run in waves over the SMs: 100 tiles are one wave, 101 are two") {
    const double tile_s = 2.0 * 128 * 64 * 256 / 1e11;
    CHECK(gemm_compute_s(1, 128, 64, 256, DType::float32, m) == Approx(tile_s));
    CHECK(gemm_compute_s(100, 128, 64, 256, DType::float32, m) == Approx(tile_s));
    CHECK(gemm_compute_s(101, 128, 64, 256, DType::float32, m) == Approx(2 * tile_s));
    CHECK_THROWS_AS(gemm_compute_s(0, 128, 64, 256, DType::float32, m), std::invalid_argument);
  }
  SECTION("a tiny matmul is one tile on one SM plus the launch; eager is one ATen call") {
    const auto g = make_op(OpKind::matmul, dense(8, 8, 8));
    const auto k = predict_op(g.op(), m, GpuMode::kernel);
    const double bytes = (64.0 + 64 + 64) * 4;
    CHECK(k.time_s == Approx(2e-6 + std::max(2.0 * 8 * 8 * 8 / 1e11, bytes / 2e12)));
    CHECK(k.kernels[0].name == "gemm");
    CHECK(predict_op(g.op(), m, GpuMode::eager).time_s == 5e-6);
  }
  SECTION("segment_matmul: four kernels, full 128-row tiles per segment, the host adds to the kernels") {
    // 1000 rows in 10 segments of 100: one (partly empty) 128 x 64 tile each, one wave.
    const auto g = make_op(OpKind::segment_matmul, dense(1000, 64, 64, 10));
    const auto k = predict_op(g.op(), m, GpuMode::kernel);
    REQUIRE(k.kernels.size() == 4);
    const double args = 10 * 60.0;
    const double operands = (1000.0 * 64 + 10.0 * 64 * 64 + 1000.0 * 64) * 4;
    const double sizes = 2e-6 + std::max(21.0 * 8 / 2e12, 0.0);
    const double to_host = 2e-6 + 10 * 8 / 1e10, to_device = 2e-6 + args / 1e10;
    const double gemm = 2e-6 + std::max(2.0 * 128 * 64 * 64 / 1e11, (operands + args) / 2e12);
    CHECK(k.time_s == Approx(sizes + to_host + to_device + gemm));
    const auto e = predict_op(g.op(), m, GpuMode::eager);
    CHECK(e.host_floor_s == Approx(30e-6 + 10 * 1e-6));
    CHECK(e.time_s == Approx(e.host_floor_s + k.time_s));
  }
  SECTION("cosine cutoff is five elementwise passes, shifted softplus two, relu one") {
    const double elements = 1000.0 * 16, pass = 2e-6 + elements * 8 / 2e12;
    const auto cut = predict_op(make_op(OpKind::unary, dense(1000, 16), false, UnaryFn::cosine_cutoff).op(), m, GpuMode::kernel);
    CHECK(cut.kernels.size() == 5);
    CHECK(cut.time_s == Approx(5 * pass));
    const auto ssp = predict_op(make_op(OpKind::unary, dense(1000, 16), false, UnaryFn::shifted_softplus).op(), m, GpuMode::eager);
    CHECK(ssp.kernels.size() == 2);
    CHECK(ssp.host_floor_s == Approx(2 * 5e-6));
    const auto relu = predict_op(make_op(OpKind::unary, dense(1000, 16), false, UnaryFn::relu).op(), m, GpuMode::kernel);
    CHECK(relu.time_s == Approx(pass));
  }
  SECTION("binary with a per-row operand reads it once") {
    OpShape s = dense(1000, 16);
    s.other_rows = 1000;
    s.other_groups = 1;
    const auto p = predict_op(make_op(OpKind::binary, s).op(), m, GpuMode::kernel);
    CHECK(p.time_s == Approx(2e-6 + (2 * 16000.0 + 1000) * 4 / 2e12));
  }
  SECTION("scatter_mean: the sum, the count and the division; eager floor of two scatter_sum calls and four ATen calls") {
    const auto g = make_op(OpKind::scatter_mean, shape(4096, 64, 1024));
    const auto p = predict_op(g.op(), m, GpuMode::kernel);
    REQUIRE(p.kernels.size() == 8);
    // Its first two kernels are scatter_add's.
    const auto sum = predict(GpuOp::scatter_add, shape(4096, 64, 1024), DType::float32, m, GpuMode::kernel);
    CHECK(p.kernels[0].time_s == Approx(sum.kernels[0].time_s));
    CHECK(p.kernels[1].time_s == Approx(sum.kernels[1].time_s));
    CHECK(p.time_s > sum.time_s);
    // The count: 4096 scalar atomicAdds into 1024 rows (4 per address, 1e-8 s each serial).
    CHECK(p.kernels[4].time_s == Approx(2e-6 + std::max({4096.0 / 2e11, (4096.0 * 4 + 4096.0 * 8 + 2 * 1024.0 * 4) / 2e12, 4 * 1e-8})));
    CHECK(predict_op(g.op(), m, GpuMode::eager).host_floor_s == Approx(2 * 25e-6 + 4 * 5e-6));
  }
  SECTION("degree_count: zeros, ones, scalar scatter_add_; contended addresses serialise") {
    // 100,000 edges into 10 nodes: 10,000 updates per address at 1e-8 s = 100 us.
    const auto p = predict_op(make_op(OpKind::degree_count, shape(100000, 1, 10)).op(), m, GpuMode::kernel);
    REQUIRE(p.kernels.size() == 3);
    CHECK(p.kernels[2].time_s == Approx(2e-6 + 1e-4));
    CHECK(p.limiter == "contention");
    CHECK(predict_op(make_op(OpKind::degree_count, shape(16, 1, 10)).op(), m, GpuMode::eager).time_s == Approx(3 * 5e-6));
  }
}

TEST_CASE("GEMMs respect the roofline and reach it when large", "[gpu][model][ops][unit]") {
  for (const auto& name : shipped_gpu_machines()) {
    const GpuMachine m = load_gpu_machine(name);
    const double fastest_bytes_per_s = std::max(m.hbm_bytes_per_s, m.l2_bytes_per_s);
    for (std::int64_t rows : {1, 100, 19717, 1 << 20}) {
      for (std::int64_t k : {3, 64, 500}) {
        for (std::int64_t n : {1, 16, 256}) {
          INFO(name << " " << rows << " x " << k << " x " << n);
          const auto g = make_op(OpKind::matmul, dense(rows, k, n), true);
          const auto p = predict_op(g.op(), m, GpuMode::kernel);
          const double bytes = static_cast<double>(g.op().min_bytes());
          CHECK(p.time_s >= m.calibration.launch_latency_s + g.op().flops() / m.fp32_flops_per_s);
          CHECK(p.time_s >= m.calibration.launch_latency_s + bytes / fastest_bytes_per_s);
          const auto s = make_op(OpKind::segment_matmul, dense(rows, k, n, 8));
          CHECK(predict_op(s.op(), m, GpuMode::kernel).time_s >= s.op().flops() / m.fp32_flops_per_s);
        }
      }
    }
    // 8192^3: 8192 full tiles over the SMs waste under 2% to the last wave, so the time is within a few
    // percent of FLOPs / (peak x efficiency).
    const auto big = make_op(OpKind::matmul, dense(8192, 8192, 8192));
    const double ideal = big.op().flops() / (m.fp32_flops_per_s * m.gemm.efficiency);
    const auto p = predict_op(big.op(), m, GpuMode::kernel);
    CHECK(p.limiter == "compute");
    CHECK(p.time_s >= ideal);
    CHECK(p.time_s <= 1.05 * ideal + m.calibration.launch_latency_s);
  }
}

TEST_CASE("new op kinds never take less time with more rows or wider rows", "[gpu][model][ops][unit]") {
  const GpuMachine m = load_gpu_machine("a100-40gb");
  for (GpuMode mode : {GpuMode::kernel, GpuMode::eager}) {
    for (std::size_t i = 0; i < every_kind(8, 8).size(); ++i) {
      double last = 0;
      for (std::int64_t n = 8; n <= (1 << 20); n *= 4) {
        const OneOp g = std::move(every_kind(n, 64)[i]);
        INFO(to_string(mode) << " " << to_string(g.op().kind) << " n=" << n);
        const double t = predict_op(g.op(), m, mode).time_s;
        CHECK(t >= last);
        last = t;
      }
      last = 0;
      for (std::int64_t f = 1; f <= 1024; f *= 2) {
        const OneOp g = std::move(every_kind(4096, f)[i]);
        if (g.op().kind == OpKind::degree_count) continue;  // always one feature
        INFO(to_string(mode) << " " << to_string(g.op().kind) << " f=" << f);
        const double t = predict_op(g.op(), m, mode).time_s;
        CHECK(t >= last);
        last = t;
      }
    }
  }
  // More segments over the same rows: more host work per call and more partly empty tiles.
  double last = 0;
  for (std::int64_t segments = 1; segments <= 4096; segments *= 4) {
    const double t = predict_op(make_op(OpKind::segment_matmul, dense(100000, 64, 64, segments)).op(), m, GpuMode::eager).time_s;
    CHECK(t > last);
    last = t;
  }
}

TEST_CASE("the gpu-model backend runs a chained graph from shapes alone", "[gpu][model][ops][unit]") {
  // linear -> relu -> gather -> scatter_mean: every op after the first reads an earlier output.
  OpGraph graph;
  const TensorId x = graph.add_tensor({"x", {100, 32}, DType::float32});
  const TensorId w = graph.add_tensor({"w", {32, 16}, DType::float32});
  const TensorId src = graph.add_tensor({"src", {400}, DType::int32});
  const TensorId dst = graph.add_tensor({"dst", {400}, DType::int32});
  namespace layers = tilesim::workloads::layers;
  const TensorId h = graph.add_op(layers::matmul("lin", graph, x, w, -1));
  const TensorId a = graph.add_op(layers::unary("act", graph, UnaryFn::relu, h));
  const TensorId msg = graph.add_op(layers::gather("gather", graph, a, src));
  graph.add_op(layers::scatter("aggregate", graph, OpKind::scatter_mean, msg, dst, 100));

  for (GpuMode mode : {GpuMode::kernel, GpuMode::eager}) {
    GpuModelBackend backend(load_gpu_machine("a100-40gb"), mode, "gpu-model:a100-40gb");
    backend.prepare(graph);
    const BackendResult r = backend.run(graph, TensorValues{}, RunOptions{});
    CHECK(r.kind == ResultKind::modeled);
    REQUIRE(r.ops.size() == 4);
    double total = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      INFO(r.ops[i].op);
      CHECK(r.ops[i].op_kind == graph.ops[i].kind);
      const GpuPrediction alone = predict_op(graph.ops[i], backend.machine(), mode);
      if (mode == GpuMode::kernel) {
        CHECK(r.ops[i].time_s == alone.time_s);
      } else {
        // In a graph an eager op's host side is its own floor plus autograd's bookkeeping once it
        // reads a parameter (here every op from the linear on): models/gpu/eager_timeline.hpp.
        const double host = r.ops[i].plan["eager_host_s"].get<double>();
        CHECK(host == Approx(alone.host_floor_s + alone.python_kernel_calls * backend.machine().eager.autograd_node_s));
      }
      CHECK(r.ops[i].plan["mode"] == to_string(mode));
      CHECK(!r.ops[i].plan["call"].get<std::string>().empty());
      total += r.ops[i].time_s;
    }
    CHECK(r.time_s == Approx(total));
    if (mode == GpuMode::eager) {
      const auto& e = r.host["eager"];
      CHECK(r.time_s == Approx(std::max(e["host_s"].get<double>(), e["device_s"].get<double>())));
    }
  }
}

// ---- The kinds of a training step: transposed matmuls, unary_grad, sum_to, loss, loss_grad and the
// optimizer's foreach update (gpu_training_model.cpp, gpu_optimizer_model.cpp).

namespace {

// A training-step op over fresh graph-input tensors: `op` gives the kind, shape and settings
// (transposes, function, loss, optimizer); its operands are made here.
OneOp make_training_op(Op op) {
  OneOp g;
  if (op.name.empty()) op.name = "op";
  const auto f32 = [&](std::vector<std::int64_t> shape) { return g.graph.add_tensor({"t", shape, DType::float32}); };
  const OpShape& s = op.shape;
  switch (op.kind) {
    case OpKind::matmul:
      op.input = op.transpose_input ? f32({s.num_features, s.num_inputs}) : f32({s.num_inputs, s.num_features});
      op.weight = op.transpose_weight ? f32({s.out_features, s.num_features}) : f32({s.num_features, s.out_features});
      break;
    case OpKind::segment_matmul:  // the backward forms (ir/op_graph.hpp)
      op.input = f32({s.num_inputs, s.num_features});
      op.indices = g.graph.add_tensor({"offsets", {s.num_segments + 1}, DType::int32});
      op.weight = op.transpose_input ? f32({s.num_inputs, s.out_features}) : f32({s.num_segments, s.out_features, s.num_features});
      op.phase = OpPhase::backward;
      break;
    case OpKind::unary_grad:
      op.input = f32({s.num_inputs, s.num_features});
      op.weight = f32({s.num_inputs, s.num_features});
      op.phase = OpPhase::backward;
      break;
    case OpKind::sum_to:
      op.input = f32({s.num_inputs, s.num_features});
      op.phase = OpPhase::backward;
      break;
    case OpKind::loss:
    case OpKind::loss_grad:
      op.input = f32({s.num_inputs, s.num_features});
      if (op.loss == LossFn::cross_entropy)
        op.indices = g.graph.add_tensor({"labels", {s.num_inputs}, DType::int32});
      else
        op.weight = f32({s.num_inputs, s.num_features});
      if (op.aux >= 0) op.aux = f32({s.num_inputs});  // row weights, asked for by any aux >= 0
      op.phase = OpPhase::loss;
      break;
    case OpKind::optimizer_step: {
      op.input = f32({s.num_inputs, s.num_features});
      op.weight = f32({s.num_inputs, s.num_features});
      if (op.optimizer.state_rows() > 0) op.bias = f32({op.optimizer.state_rows(), s.num_inputs * s.num_features});
      if (op.optimizer.kind == OptimizerSpec::Kind::adam) op.aux = f32({1, 1});
      op.phase = OpPhase::optimizer;
      break;
    }
    default: FAIL("not a training-step kind: " << to_string(op.kind));
  }
  g.graph.add_op(op);
  return g;
}

Op training_op(OpKind kind, std::int64_t rows, std::int64_t features) {
  Op op;
  op.kind = kind;
  op.shape.num_inputs = rows;
  op.shape.num_features = features;
  return op;
}

Op transposed_matmul(std::int64_t m, std::int64_t k, std::int64_t n, bool transpose_input) {
  Op op = training_op(OpKind::matmul, m, k);
  op.shape.out_features = n;
  op.transpose_input = transpose_input;
  op.transpose_weight = !transpose_input;
  op.phase = OpPhase::backward;
  return op;
}

Op unary_grad_op(UnaryFn fn, std::int64_t rows, std::int64_t features) {
  Op op = training_op(OpKind::unary_grad, rows, features);
  op.unary = fn;
  return op;
}

Op sum_to_op(std::int64_t rows, std::int64_t features, std::int64_t other_rows, std::int64_t other_groups) {
  Op op = training_op(OpKind::sum_to, rows, features);
  op.shape.other_rows = other_rows;
  op.shape.other_groups = other_groups;
  return op;
}

Op loss_op(OpKind kind, LossFn fn, std::int64_t rows, std::int64_t classes, bool weighted = false) {
  Op op = training_op(kind, rows, classes);
  op.loss = fn;
  if (weighted) op.aux = 0;  // make_training_op adds the row weights' tensor
  return op;
}

OptimizerSpec adam(double weight_decay) {
  OptimizerSpec o;
  o.kind = OptimizerSpec::Kind::adam;
  o.weight_decay = weight_decay;
  return o;
}

OptimizerSpec sgd(double momentum, double weight_decay) {
  OptimizerSpec o;
  o.momentum = momentum;
  o.weight_decay = weight_decay;
  return o;
}

Op step_op(const OptimizerSpec& o, std::int64_t rows, std::int64_t features) {
  Op op = training_op(OpKind::optimizer_step, rows, features);
  op.optimizer = o;
  return op;
}

// One op of every training kind and setting at a size scaled by `n` (rows) and `f` (features).
std::vector<OneOp> every_training_kind(std::int64_t n, std::int64_t f) {
  std::vector<OneOp> ops;
  ops.push_back(make_training_op(transposed_matmul(f, n, 16, true)));   // x^T @ g: a weight's gradient
  ops.push_back(make_training_op(transposed_matmul(n, 16, f, false)));  // g @ W^T: an input's gradient
  for (UnaryFn fn : {UnaryFn::relu, UnaryFn::leaky_relu, UnaryFn::shifted_softplus, UnaryFn::exp, UnaryFn::scale,
                     UnaryFn::rsqrt_or_zero, UnaryFn::reciprocal_or_zero, UnaryFn::cosine_cutoff})
    ops.push_back(make_training_op(unary_grad_op(fn, n, f)));
  ops.push_back(make_training_op(sum_to_op(n, f, 1, f)));  // a bias row's column sums
  ops.push_back(make_training_op(sum_to_op(n, f, n, 1)));  // a per-row scalar's row sums
  for (LossFn fn : {LossFn::cross_entropy, LossFn::mse})
    for (OpKind kind : {OpKind::loss, OpKind::loss_grad})
      for (bool weighted : {false, true}) ops.push_back(make_training_op(loss_op(kind, fn, n, f, weighted)));
  for (const OptimizerSpec& o : {adam(5e-4), adam(0), sgd(0, 0), sgd(0.9, 1e-4)}) ops.push_back(make_training_op(step_op(o, n, f)));
  return ops;
}

std::string describe(const Op& op) {
  std::string d = to_string(op.kind);
  if (op.kind == OpKind::unary_grad) d += " " + to_string(op.unary);
  if (op.kind == OpKind::loss || op.kind == OpKind::loss_grad) d += " " + to_string(op.loss) + (op.aux >= 0 ? " weighted" : "");
  if (op.kind == OpKind::optimizer_step) d += " " + to_string(op.optimizer.kind);
  if (op.kind == OpKind::sum_to) d += " to [" + std::to_string(op.shape.other_rows) + ", " + std::to_string(op.shape.other_groups) + "]";
  if (op.transpose_input) d += " x^T @ g";
  if (op.transpose_weight) d += " g @ W^T";
  return d;
}

}  // namespace

TEST_CASE("training kinds are modeled in both modes: positive, eager >= kernel, host floor when tiny", "[gpu][model][training][unit]") {
  for (const auto& name : shipped_gpu_machines()) {
    const GpuMachine m = load_gpu_machine(name);
    for (std::int64_t n : {8, 4096, 65536}) {
      for (std::int64_t f : {8, 128}) {
        for (const OneOp& g : every_training_kind(n, f)) {
          const Op& op = g.op();
          INFO(name << " " << describe(op) << " n=" << n << " f=" << f);
          const auto k = predict_op(op, m, GpuMode::kernel);
          const auto e = predict_op(op, m, GpuMode::eager);
          CHECK(k.time_s > 0);
          CHECK(k.time_s == k.kernel_s);
          CHECK(e.kernel_s == k.kernel_s);
          CHECK(e.time_s >= k.time_s);
          CHECK(e.host_floor_s > 0);
          CHECK(!e.call.empty());
          CHECK(!k.kernels.empty());
          CHECK(k.time_s >= m.calibration.launch_latency_s * static_cast<double>(k.kernels.size()));
          CHECK(k.flops == op.flops());
          for (const auto& kernel : k.kernels) CHECK(kernel.l2_bytes > 0);  // every kernel moves bytes
          if (n == 8 && f == 8) {
            CHECK(e.time_s == e.host_floor_s);
            CHECK(e.limiter == "host");
          }
        }
      }
    }
  }
}

TEST_CASE("training kinds take more time on more rows and wider rows, in both modes", "[gpu][model][training][unit]") {
  const GpuMachine m = load_gpu_machine("a100-40gb");
  const std::size_t kinds = every_training_kind(8, 8).size();
  for (GpuMode mode : {GpuMode::kernel, GpuMode::eager}) {
    for (std::size_t i = 0; i < kinds; ++i) {
      double first = 0, last = 0;
      for (std::int64_t n = 8; n <= (1 << 20); n *= 4) {
        const OneOp g = std::move(every_training_kind(n, 64)[i]);
        INFO(to_string(mode) << " " << describe(g.op()) << " n=" << n);
        const double t = predict_op(g.op(), m, mode).time_s;
        CHECK(t >= last);
        if (first == 0) first = t;
        last = t;
      }
      INFO(to_string(mode) << " " << describe(every_training_kind(8, 64)[i].op()));
      CHECK(last > first);  // a million rows cost more than eight, whatever floor the small one sits on
      last = 0;
      for (std::int64_t f = 1; f <= 1024; f *= 4) {
        const OneOp g = std::move(every_training_kind(4096, f)[i]);
        INFO(to_string(mode) << " " << describe(g.op()) << " f=" << f);
        const double t = predict_op(g.op(), m, mode).time_s;
        CHECK(t >= last);
        last = t;
      }
    }
  }
}

TEST_CASE("a transposed matmul costs what the plain matmul of the same M, K and N costs", "[gpu][model][training][unit]") {
  for (const auto& name : shipped_gpu_machines()) {
    const GpuMachine m = load_gpu_machine(name);
    for (const auto& [rows, k, n] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
             {1433, 2708, 16}, {2708, 16, 1433}, {64, 64, 64}, {19717, 500, 64}, {3, 100000, 7}}) {
      INFO(name << " " << rows << " x " << k << " x " << n);
      const auto plain = make_op(OpKind::matmul, dense(rows, k, n));
      for (bool transpose_input : {true, false}) {
        const auto t = make_training_op(transposed_matmul(rows, k, n, transpose_input));
        for (GpuMode mode : {GpuMode::kernel, GpuMode::eager}) {
          const auto pt = predict_op(t.op(), m, mode), pp = predict_op(plain.op(), m, mode);
          CHECK(pt.time_s == pp.time_s);
          CHECK(pt.l2_bytes == pp.l2_bytes);
          CHECK(pt.flops == pp.flops);
          CHECK(pt.kernels.size() == pp.kernels.size());
          CHECK(pt.call != pp.call);  // it says which product of the backward it is
        }
      }
    }
  }
}

TEST_CASE("segment_matmul's backward: the input's gradient is the forward's grouped GEMM, the weight's a GEMM per segment",
          "[gpu][model][training][unit]") {
  for (const auto& name : shipped_gpu_machines()) {
    const GpuMachine m = load_gpu_machine(name);
    const std::int64_t rows = 32768, k = 64, n = 16, segments = 4;
    INFO(name);
    const auto forward = make_op(OpKind::segment_matmul, dense(rows, k, n, segments));
    Op input_grad = training_op(OpKind::segment_matmul, rows, k);
    input_grad.shape.out_features = n;
    input_grad.shape.num_segments = segments;
    input_grad.transpose_weight = true;
    Op weight_grad = input_grad;
    weight_grad.transpose_weight = false;
    weight_grad.transpose_input = true;
    const auto gi = make_training_op(input_grad), gw = make_training_op(weight_grad);
    for (GpuMode mode : {GpuMode::kernel, GpuMode::eager}) {
      const auto pf = predict_op(forward.op(), m, mode), pi = predict_op(gi.op(), m, mode), pw = predict_op(gw.op(), m, mode);
      CHECK(pi.time_s == pf.time_s);
      CHECK(pi.kernels.size() == pf.kernels.size());
      CHECK(pi.call != pf.call);
      CHECK(pw.flops == pf.flops);
      std::size_t gemms = 0;
      for (const auto& kern : pw.kernels) gemms += kern.name == "gemm" ? 1 : 0;
      CHECK(gemms == static_cast<std::size_t>(segments));
      REQUIRE(!pw.kernels.empty());
      CHECK(pw.kernels.back().name == "stack");
      CHECK(pw.time_s > 0);
    }
  }
}

TEST_CASE("training kinds equal hand-computed kernel times", "[gpu][model][training][formula]") {
  const GpuMachine m = round_machine();  // launch 2 us, L2 2e12 B/s achieved, aten_call 5 us
  const auto kernel = [&](const Op& op) { return predict_op(op, m, GpuMode::kernel); };
  const auto eager = [&](const Op& op) { return predict_op(op, m, GpuMode::eager); };

  SECTION("sum_to: one reduce kernel reading the gradient and writing the reduced shape") {
    // [4096, 64] to a bias row [1, 64]: (4096 * 64 + 64) * 4 bytes, within L2.
    const auto g = make_training_op(sum_to_op(4096, 64, 1, 64));
    const auto p = kernel(g.op());
    REQUIRE(p.kernels.size() == 1);
    const double bytes = (4096.0 * 64 + 64) * 4;
    CHECK(p.l2_bytes == Approx(bytes));
    CHECK(p.time_s == Approx(2e-6 + bytes / 2e12));
    CHECK(eager(g.op()).time_s == Approx(5e-6));  // one ATen sum: the host floor is the slower side
    // 16M x 8 floats (512 MiB) to per-row sums: beyond L2, so mostly DRAM at 1e12 B/s.
    const auto big = make_training_op(sum_to_op(1 << 24, 8, 1 << 24, 1));
    const auto q = kernel(big.op());
    const double big_bytes = (16777216.0 * 8 + 16777216.0) * 4;
    const double hit = q.l2_hit_fraction;
    CHECK(hit < 0.1);
    CHECK(q.time_s == Approx(2e-6 + big_bytes * hit / 2e12 + big_bytes * (1 - hit) / 1e12));
  }
  SECTION("unary_grad: relu is one threshold_backward, the cosine cutoff six kernels, gcn_norm's pow five") {
    const double elements = 1000.0 * 16;
    const auto relu = kernel(make_training_op(unary_grad_op(UnaryFn::relu, 1000, 16)).op());
    REQUIRE(relu.kernels.size() == 1);
    CHECK(relu.kernels[0].name == "threshold_backward");
    CHECK(relu.time_s == Approx(2e-6 + elements * 12 / 2e12));  // reads grad and the saved value, writes
    const auto cut = kernel(make_training_op(unary_grad_op(UnaryFn::cosine_cutoff, 1000, 16)).op());
    CHECK(cut.kernels.size() == 6);
    CHECK(cut.time_s == Approx(6 * 2e-6 + elements * (5 * 8 + 12) / 2e12));
    const auto pow = eager(make_training_op(unary_grad_op(UnaryFn::rsqrt_or_zero, 1000, 16)).op());
    CHECK(pow.kernels.size() == 5);
    CHECK(pow.host_floor_s == Approx(5 * 5e-6));
  }
  SECTION("cross entropy: log_softmax and nll_loss forward; seed, zeros, nll_loss_backward, log_softmax_backward") {
    const double rows = 1000, elements = rows * 7;
    const auto fwd = kernel(make_training_op(loss_op(OpKind::loss, LossFn::cross_entropy, 1000, 7)).op());
    REQUIRE(fwd.kernels.size() == 2);
    CHECK(fwd.time_s == Approx(2e-6 + elements * 8 / 2e12 + 2e-6 + (rows * (8 + 4) + 8) / 2e12));
    const auto bwd = eager(make_training_op(loss_op(OpKind::loss_grad, LossFn::cross_entropy, 1000, 7)).op());
    REQUIRE(bwd.kernels.size() == 4);
    CHECK(bwd.kernel_s == Approx(4 * 2e-6 + (4 + elements * 4 + rows * 12 + 8 + elements * 12) / 2e12));
    CHECK(bwd.host_floor_s == Approx(4 * 5e-6));
    const auto mse = kernel(make_training_op(loss_op(OpKind::loss_grad, LossFn::mse, 1000, 7)).op());
    CHECK(mse.kernels.size() == 3);
  }
  SECTION("row weights: reduction='none' times w, summed, over sum w; autograd's div and mul backwards before the loss's") {
    const double rows = 1000, elements = rows * 7;
    // Cross entropy: log_softmax, nll_loss (a value per row), mul by w, the two sums, clamp, div.
    const auto fwd = eager(make_training_op(loss_op(OpKind::loss, LossFn::cross_entropy, 1000, 7, true)).op());
    REQUIRE(fwd.kernels.size() == 7);
    CHECK(fwd.kernel_s == Approx(7 * 2e-6 + (elements * 8 + rows * (8 + 8) + rows * 12 + 2 * (rows + 1) * 4 + 8 + 12) / 2e12));
    CHECK(fwd.host_floor_s == Approx(7 * 5e-6));
    // Seed, div, mul by w, zeros, nll_loss_backward (a gradient per row in), log_softmax_backward.
    const auto bwd = eager(make_training_op(loss_op(OpKind::loss_grad, LossFn::cross_entropy, 1000, 7, true)).op());
    REQUIRE(bwd.kernels.size() == 6);
    CHECK(bwd.kernel_s == Approx(6 * 2e-6 + (4 + 12 + (2 * rows + 1) * 4 + elements * 4 + rows * 16 + elements * 12) / 2e12));
    CHECK(bwd.host_floor_s == Approx(6 * 5e-6));
    // mse: the squares, their row means, then as above; backward the mean's expand over C and
    // mse_loss_backward reading a full gradient.
    const auto mse = kernel(make_training_op(loss_op(OpKind::loss, LossFn::mse, 1000, 7, true)).op());
    REQUIRE(mse.kernels.size() == 7);
    CHECK(mse.time_s == Approx(7 * 2e-6 + (elements * 12 + (elements + rows) * 4 + rows * 12 + 2 * (rows + 1) * 4 + 8 + 12) / 2e12));
    const auto mse_grad = kernel(make_training_op(loss_op(OpKind::loss_grad, LossFn::mse, 1000, 7, true)).op());
    REQUIRE(mse_grad.kernels.size() == 6);
    CHECK(mse_grad.time_s == Approx(6 * 2e-6 + (4 + 12 + (2 * rows + 1) * 4 + (elements + rows) * 4 + elements * 4 + elements * 16) / 2e12));
    // Each weighted form moves more bytes than the unweighted one.
    for (LossFn fn : {LossFn::cross_entropy, LossFn::mse})
      for (OpKind kind : {OpKind::loss, OpKind::loss_grad}) {
        INFO(to_string(kind) << " " << to_string(fn));
        CHECK(kernel(make_training_op(loss_op(kind, fn, 1000, 7, true)).op()).l2_bytes >
              kernel(make_training_op(loss_op(kind, fn, 1000, 7)).op()).l2_bytes);
      }
  }
  SECTION("Adam alone: eight foreach kernels of 84 bytes per element; floor of 8 calls, the step and the parameter") {
    const auto g = make_training_op(step_op(adam(5e-4), 1000, 16));
    const auto p = eager(g.op());
    REQUIRE(p.kernels.size() == 8);
    CHECK(p.kernel_s == Approx(8 * 2e-6 + 16000.0 * 84 / 2e12));
    // Beyond the update: zero_grad's assignment of None (a view-cost call) and AccumulateGrad's node.
    const double around = round_machine().eager.aten_view_call_s + 7e-6;
    CHECK(p.host_floor_s == Approx(8 * 5e-6 + 100e-6 + 10e-6 + around));
    CHECK(p.time_s == Approx(p.host_floor_s));
    // Without weight decay the out-of-place add goes: 7 kernels, 72 bytes per element.
    CHECK(kernel(make_training_op(step_op(adam(0), 1000, 16)).op()).time_s == Approx(7 * 2e-6 + 16000.0 * 72 / 2e12));
    // Plain SGD is one _foreach_add_; with momentum and weight decay four.
    CHECK(kernel(make_training_op(step_op(sgd(0, 0), 1000, 16)).op()).time_s == Approx(2e-6 + 16000.0 * 12 / 2e12));
    CHECK(kernel(make_training_op(step_op(sgd(0.9, 1e-4), 1000, 16)).op()).kernels.size() == 4);
  }
  SECTION("a backward scatter_add is index_select's gradient: the same kernels, two ATen calls on the host") {
    const auto fwd = make_op(OpKind::scatter_add, shape(4096, 16, 512));
    OneOp bwd = make_op(OpKind::scatter_add, shape(4096, 16, 512));
    bwd.graph.ops.back().phase = OpPhase::backward;
    CHECK(kernel(bwd.op()).time_s == Approx(kernel(fwd.op()).time_s));
    CHECK(eager(bwd.op()).host_floor_s == Approx(2 * 5e-6));
    CHECK(eager(fwd.op()).host_floor_s == Approx(25e-6));  // torch_scatter's fitted floor
  }
}

TEST_CASE("one foreach step: launches and step floors charged once, bytes per parameter", "[gpu][model][training][formula]") {
  const GpuMachine m = round_machine();
  // Four parameters of a GCN on Cora (1433 x 16, 16, 16 x 7, 7) updated by one Adam step.
  OpGraph graph;
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {{1433, 16}, {1, 16}, {16, 7}, {1, 7}};
  const TensorId t = graph.add_tensor({"t", {1, 1}, DType::float32});
  double elements = 0;
  for (const auto& [rows, cols] : shapes) {
    Op op = step_op(adam(5e-4), rows, cols);
    op.name = "p" + std::to_string(graph.ops.size()) + ".step";
    op.input = graph.add_tensor({"p", {rows, cols}, DType::float32});
    op.weight = graph.add_tensor({"g", {rows, cols}, DType::float32});
    op.bias = graph.add_tensor({"s", {2, rows * cols}, DType::float32});
    op.aux = t;
    graph.add_op(op);
    elements += static_cast<double>(rows * cols);
  }
  const auto steps = foreach_steps(graph);
  const double around = m.eager.aten_view_call_s + m.eager.autograd_backward_node_s;  // zero_grad to None, AccumulateGrad
  REQUIRE(steps.size() == 4);
  CHECK(steps.at(0).parameter_elements == std::vector<std::int64_t>{1433 * 16, 16, 112, 7});
  CHECK(steps.at(3).position == 3);
  for (GpuMode mode : {GpuMode::kernel, GpuMode::eager}) {
    GpuModelBackend backend(m, mode, "gpu-model:round");
    backend.prepare(graph);
    const BackendResult r = backend.run(graph, TensorValues{}, RunOptions{});
    REQUIRE(r.ops.size() == 4);
    double kernels = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      const auto p = predict_op(graph.ops[i], m, mode, &steps.at(i));
      CHECK(r.ops[i].time_s == p.time_s);
      kernels += p.kernel_s;
      if (mode == GpuMode::eager) CHECK(p.host_floor_s == Approx((i == 0 ? 8 * 5e-6 + 100e-6 + 10e-6 : 10e-6) + around));
    }
    // Eight kernels launched once for the whole step (four tensors fit one launch), every element's
    // 84 bytes at the L2 rate: what the step's launches would cost as one op.
    CHECK(kernels == Approx(8 * 2e-6 + elements * 84 / 2e12));
    if (mode == GpuMode::eager) CHECK(r.time_s == Approx(8 * 5e-6 + 100e-6 + 4 * (10e-6 + around)));  // host bound
  }
  // Alone, each op would pay the launches again.
  CHECK(predict_op(graph.ops[2], m, GpuMode::kernel).kernel_s > predict_op(graph.ops[2], m, GpuMode::kernel, &steps.at(2)).kernel_s);
}

TEST_CASE("torch.optim's per-parameter loop (PyTorch 1.x): every parameter launches its own calls, zero_grad fills, AccumulateGrad adds",
          "[gpu][model][training][formula]") {
  GpuMachine m = round_machine();
  m.framework.optimizer = GpuMachine::Framework::Optimizer::per_parameter_loop;
  m.framework.zero_grad_fills = true;
  const double view = m.eager.aten_view_call_s;
  // Two parameters, Adam with weight decay: per parameter the loop's nine calls (add, mul_, add_,
  // mul_, addcmul_, sqrt, div, add_, addcdiv_: 92 bytes per element), zero_grad's fill (4) and
  // AccumulateGrad's add (12): eleven launches each, whatever its position in the step.
  OpGraph graph;
  const TensorId t = graph.add_tensor({"t", {1, 1}, DType::float32});
  for (std::int64_t cols : {16, 7}) {
    Op op = step_op(adam(5e-4), 100, cols);
    op.name = "p" + std::to_string(cols) + ".step";
    op.input = graph.add_tensor({"p", {100, cols}, DType::float32});
    op.weight = graph.add_tensor({"g", {100, cols}, DType::float32});
    op.bias = graph.add_tensor({"s", {2, 100 * cols}, DType::float32});
    op.aux = t;
    graph.add_op(op);
  }
  const auto steps = foreach_steps(graph);
  for (std::size_t i = 0; i < 2; ++i) {
    const double elements = static_cast<double>(graph.ops[i].shape.num_inputs * graph.ops[i].shape.num_features);
    const auto k = predict_op(graph.ops[i], m, GpuMode::kernel, &steps.at(i));
    REQUIRE(k.kernels.size() == 11);
    CHECK(k.kernels.front().name == "zero_grad_fill");
    CHECK(k.kernel_s == Approx(11 * 2e-6 + elements * (92 + 16) / 2e12));
    // Host: nine ATen calls and the parameter's Python; zero_grad's requires_grad_ and zero_;
    // AccumulateGrad's node and add; the first parameter also step()'s fixed Python, no foreach calls.
    const auto e = predict_op(graph.ops[i], m, GpuMode::eager, &steps.at(i));
    CHECK(e.host_floor_s == Approx(9 * 5e-6 + 10e-6 + (view + 5e-6) + (7e-6 + 5e-6) + (i == 0 ? 100e-6 : 0.0)));
  }
  // Without weight decay eight calls; plain SGD one, with momentum three; set_to_none drops the fill
  // and the add (and their calls), whichever the implementation.
  CHECK(predict_op(make_training_op(step_op(adam(0), 100, 16)).op(), m, GpuMode::kernel).kernels.size() == 10);
  CHECK(predict_op(make_training_op(step_op(sgd(0, 0), 100, 16)).op(), m, GpuMode::kernel).kernels.size() == 3);
  CHECK(predict_op(make_training_op(step_op(sgd(0.9, 0), 100, 16)).op(), m, GpuMode::kernel).kernels.size() == 5);
  m.framework.zero_grad_fills = false;
  const auto none = predict_op(make_training_op(step_op(adam(5e-4), 100, 16)).op(), m, GpuMode::eager);
  CHECK(none.kernels.size() == 9);
  CHECK(none.host_floor_s == Approx(9 * 5e-6 + 10e-6 + view + 7e-6 + 100e-6));
  // The shipped files describe PyTorch 1.x stacks: the loop and filled gradients.
  for (const char* name : {"a100-40gb", "a100-80gb", "h100-sxm", "h200", "v100-16gb"}) {
    INFO(name);
    const GpuMachine shipped = load_gpu_machine(name);
    CHECK(shipped.framework.optimizer == GpuMachine::Framework::Optimizer::per_parameter_loop);
    CHECK(shipped.framework.zero_grad_fills);
    CHECK(!shipped.framework.pytorch.empty());
  }
  CHECK(load_gpu_machine("v100-16gb").framework.pytorch == "1.8.1");
}

TEST_CASE("multi_tensor_apply packs tensors into launches by its argument limits", "[gpu][model][training][formula]") {
  const GpuMachine m = round_machine();
  // 130 parameters of 64 x 64 under Adam with weight decay: the three-list calls take 48 tensors a
  // launch (3 launches), lerp_ and sqrt 64 (3), mul_ and add_ 110 (2), div_ with its scalar list 96 (2),
  // addcdiv_ with its scalar list 48 (3): 21 launches, the count torch.profiler shows for this step
  // (PyTorch 2.11).
  ForeachStep step{std::vector<std::int64_t>(130, 64 * 64), 0};
  const auto g = make_training_op(step_op(adam(5e-4), 64, 64));
  const auto first = predict_op(g.op(), m, GpuMode::kernel, &step);
  double launches = 0;
  for (const auto& k : first.kernels) launches += k.time_s;
  const double bytes = 4096.0 * 84;  // this op's own elements; the step's 130 x 4096 x 4 x 6 bytes fit L2
  CHECK(launches == Approx(21 * 2e-6 + bytes / 2e12));
  step.position = 7;
  CHECK(predict_op(g.op(), m, GpuMode::kernel, &step).kernel_s == Approx(bytes / 2e12));
  // One tensor of 320 chunks of 65536 elements and one more element: each call launches twice.
  const std::int64_t big = 320 * 65536 + 1;
  ForeachStep one{{big}, 0};
  const auto b = make_training_op(step_op(sgd(0, 0), 1, big));
  const auto p = predict_op(b.op(), m, GpuMode::kernel, &one);
  const double hit = p.l2_hit_fraction;
  const double traffic = static_cast<double>(big) * 12;
  CHECK(p.time_s == Approx(2 * 2e-6 + traffic * hit / 2e12 + traffic * (1 - hit) / 1e12));
  // A step that does not list the op's parameter at its position is a caller's mistake.
  ForeachStep wrong{{5}, 0};
  CHECK_THROWS_AS(predict_op(g.op(), m, GpuMode::kernel, &wrong), std::invalid_argument);
}
