// The analytic GPU model on gather, scatter and zero fill (models/gpu/gpu_model.hpp): the L2 hit
// fraction, hand-computed predictions, the structure of the modes, and the error bounds on a fixed
// subset of the held-out A100 measurements. The other op kinds are in gpu_op_model_test.cpp, a training
// step's in gpu_training_model_test.cpp and gpu_optimizer_model_test.cpp, the fit in gpu_fit_test.cpp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "analysis/reference_data.hpp"
#include "fitting/error_metrics.hpp"
#include "fitting/split.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/gpu/gpu_model.hpp"
#include "tests/support/gpu_model_cases.hpp"

using namespace tilesim;
using namespace tilesim::gpu;
using namespace tilesim_test::gpu_cases;

namespace {

const std::vector<GpuOp> kAllOps = {GpuOp::gather, GpuOp::scatter_add, GpuOp::scatter_max, GpuOp::scatter_min,
                                    GpuOp::zero_fill};

}  // namespace

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
