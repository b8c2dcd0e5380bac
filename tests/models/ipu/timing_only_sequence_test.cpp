// Timing-only runs lay their phases end to end from the compiled costs, without the SystemC kernel
// (sim/phase_sequence.hpp). This holds that fast path equal to the kernel's run, phase by phase, over
// the shipped hydronet grid (workloads/sweeps/hydronet.json): every gather and scatter_add point on the
// simulated Bow, with uniform random indices, run both ways. Beside it, the two checks of what-if machines
// the design-space sweeps rest on: overrides equal to the base's figures give its cycles exactly, and
// twice the exchange bandwidth never slows an exchange-bound point.
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "models/ipu/ipu_backend.hpp"
#include "sim/engine.hpp"
#include "tests/support/ipu_test_support.hpp"
#include "workloads/random_streams.hpp"
#include "workloads/sweep_spec.hpp"

using namespace tilesim;

namespace {

// Restores the engine's default (no kernel for timing-only runs) however the test ends.
struct KernelForTimingOnly {
  KernelForTimingOnly() { sim::Engine::sequence_timing_only_in_systemc(true); }
  ~KernelForTimingOnly() { sim::Engine::sequence_timing_only_in_systemc(false); }
};

sim::RunStats timing_only_stats(const Op& op, const std::vector<std::int32_t>& indices, bool through_kernel) {
  if (!through_kernel) return ipu::simulate_op_timing(op, indices, tilesim_test::bow()).stats;
  KernelForTimingOnly kernel;
  return ipu::simulate_op_timing(op, indices, tilesim_test::bow()).stats;
}

void check_same_phases(const sim::RunStats& direct, const sim::RunStats& kernel) {
  REQUIRE(direct.phases.size() == kernel.phases.size());
  CHECK(direct.total_cycles == kernel.total_cycles);
  CHECK(direct.compute_cycles == kernel.compute_cycles);
  CHECK(direct.sync_cycles == kernel.sync_cycles);
  CHECK(direct.exchange_cycles == kernel.exchange_cycles);
  CHECK(direct.exchange_bytes_received == kernel.exchange_bytes_received);
  for (std::size_t k = 0; k < direct.phases.size(); ++k) {
    const sim::PhaseStats& a = direct.phases[k];
    const sim::PhaseStats& b = kernel.phases[k];
    INFO("phase " << k << " (" << b.name << ")");
    CHECK(a.name == b.name);
    CHECK(a.kind == b.kind);
    CHECK(a.start_cycle == b.start_cycle);
    CHECK(a.cycles == b.cycles);
    CHECK(a.slowest_tile == b.slowest_tile);
    CHECK(a.active_tiles == b.active_tiles);
    CHECK(a.bytes == b.bytes);
  }
}

// Calls `each(op, indices)` on every `stride`-th ipu:bow point of the shipped hydronet grid, with the
// point's uniform random indices. Returns the points visited.
template <class Each>
std::size_t for_hydronet_points(std::size_t stride, Each each) {
  const analysis::SweepSpec spec = analysis::load_sweep(std::string(TILESIM_SOURCE_DIR) + "/workloads/sweeps/hydronet.json");
  std::size_t visited = 0, k = 0;
  for (const analysis::SweepPoint& p : analysis::expand_sweep(spec)) {
    if (spec.backends[p.backend].name != "ipu:bow" || k++ % stride != 0) continue;
    OpGraph graph;
    graph.add_gather_scatter(p.op, *op_kind_from_string(p.op), DType::float32, p.shape);
    const Op& op = graph.ops.front();
    std::mt19937_64 engine(analysis::sweep_index_seed(p.shape, spec.seed, p.repeat));
    const auto indices = workloads::streams::uniform_indices(engine, op.num_indices(), op.index_range());
    INFO(p.op << " " << p.shape.num_inputs << " x " << p.shape.num_features << " -> " << p.shape.num_outputs);
    each(op, indices);
    ++visited;
  }
  return visited;
}

// Every `stride`-th point of the shipped grid, run both ways. Returns the points compared.
std::size_t compare_hydronet_grid(std::size_t stride) {
  return for_hydronet_points(stride, [](const Op& op, const std::vector<std::int32_t>& indices) {
    check_same_phases(timing_only_stats(op, indices, false), timing_only_stats(op, indices, true));
  });
}

// The whole grid in Release; every 4th point under the sanitizers, where the whole grid takes minutes
// (tests/CMakeLists.txt).
#ifdef TILESIM_TESTS_UNDER_SANITIZERS
constexpr std::size_t kWholeGridStride = 4;
#else
constexpr std::size_t kWholeGridStride = 1;
#endif

}  // namespace

TEST_CASE("ipu: timing-only phases laid end to end equal the SystemC run on a sample of the hydronet grid",
          "[ipu][sim][unit]") {
  CHECK(compare_hydronet_grid(74) == 17);  // 1,188 points: every 74th
}

TEST_CASE("ipu: timing-only phases laid end to end equal the SystemC run on every hydronet point", "[ipu][sim][unit][slow]") {
  CHECK(compare_hydronet_grid(kWholeGridStride) == (1188 + kWholeGridStride - 1) / kWholeGridStride);
}

TEST_CASE("ipu: a what-if machine whose overrides equal the base's figures gives the base's cycles exactly", "[ipu][sim][unit]") {
  const ipu::IpuMachine& base = tilesim_test::bow();
  const ipu::IpuMachine same = ipu::load_ipu_machine("bow{chip.exchange_bytes_per_cycle*=1;chip.num_tiles=1472;chip.sram_bytes_per_tile=638976}");
  REQUIRE(same.chip.num_tiles == base.chip.num_tiles);
  REQUIRE(same.chip.sram_bytes_per_tile == base.chip.sram_bytes_per_tile);
  const std::size_t points = for_hydronet_points(74, [&](const Op& op, const std::vector<std::int32_t>& indices) {
    const sim::RunStats a = ipu::simulate_op_timing(op, indices, base).stats;
    const sim::RunStats b = ipu::simulate_op_timing(op, indices, same).stats;
    CHECK(a.total_cycles == b.total_cycles);
    CHECK(a.exchange_bytes_received == b.exchange_bytes_received);
  });
  CHECK(points == 17);
}

TEST_CASE("ipu: twice the exchange bandwidth never makes an exchange-bound hydronet point slower", "[ipu][sim][unit][slow]") {
  // Exchange-bound: its exchange phases take more than half of its cycles on the shipped Bow. (Points
  // bound by syncs and fixed costs may plan differently under the faster exchange and lose a few
  // percent: the planner ranks plans by its estimates, not by their simulation.)
  const ipu::IpuMachine wide = ipu::load_ipu_machine("bow{chip.exchange_bytes_per_cycle*=2}");
  std::size_t exchange_bound = 0;
  for_hydronet_points(kWholeGridStride, [&](const Op& op, const std::vector<std::int32_t>& indices) {
    const sim::RunStats base = ipu::simulate_op_timing(op, indices, tilesim_test::bow()).stats;
    if (2 * base.exchange_cycles <= base.total_cycles) return;
    ++exchange_bound;
    CHECK(ipu::simulate_op_timing(op, indices, wide).stats.total_cycles <= base.total_cycles);
  });
  CHECK(exchange_bound >= (kWholeGridStride == 1 ? 50u : 1u));  // 70 of the 1,188 on the shipped Bow
}
