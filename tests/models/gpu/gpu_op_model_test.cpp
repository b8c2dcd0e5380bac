// The GPU model on the op kinds beyond the calibrated gather/scatter (predict_op; models/gpu/
// gpu_op_model.cpp, gpu_gemm_model.cpp): matmul, segment_matmul, elementwise, scatter_mean and
// degree_count, against hand-computed times, the roofline, and more work never taking less time.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "models/gpu/gpu_machine.hpp"
#include "models/gpu/gpu_model.hpp"
#include "tests/support/gpu_model_cases.hpp"

using namespace tilesim;
using namespace tilesim::gpu;
using namespace tilesim_test::gpu_cases;

namespace {

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
                     UnaryFn::rsqrt_or_zero, UnaryFn::reciprocal_or_zero, UnaryFn::cosine_cutoff, UnaryFn::sigmoid, UnaryFn::softplus,
                     UnaryFn::sqrt, UnaryFn::log, UnaryFn::clamp_min})
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
