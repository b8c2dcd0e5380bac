// Timing-only runs lay their phases end to end from the compiled costs, without the SystemC kernel
// (sim/phase_sequence.hpp). This holds that fast path equal to the kernel's run, phase by phase, over
// the shipped hydronet grid (workloads/sweeps/hydronet.json): every gather and scatter_add point on the
// simulated Bow, with uniform random indices, run both ways.
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

// Every `stride`-th point of the shipped grid, run both ways. Returns the points compared.
std::size_t compare_hydronet_grid(std::size_t stride) {
  const analysis::SweepSpec spec = analysis::load_sweep(std::string(TILESIM_SOURCE_DIR) + "/workloads/sweeps/hydronet.json");
  std::size_t compared = 0, k = 0;
  for (const analysis::SweepPoint& p : analysis::expand_sweep(spec)) {
    if (spec.backends[p.backend].name != "ipu:bow" || k++ % stride != 0) continue;
    OpGraph graph;
    graph.add_gather_scatter(p.op, *op_kind_from_string(p.op), DType::float32, p.shape);
    const Op& op = graph.ops.front();
    std::mt19937_64 engine(analysis::sweep_index_seed(p.shape, spec.seed, p.repeat));
    const auto indices = workloads::streams::uniform_indices(engine, op.num_indices(), op.index_range());
    INFO(p.op << " " << p.shape.num_inputs << " x " << p.shape.num_features << " -> " << p.shape.num_outputs);
    check_same_phases(timing_only_stats(op, indices, false), timing_only_stats(op, indices, true));
    ++compared;
  }
  return compared;
}

}  // namespace

TEST_CASE("ipu: timing-only phases laid end to end equal the SystemC run on a sample of the hydronet grid",
          "[ipu][sim][unit]") {
  CHECK(compare_hydronet_grid(37) == 33);  // 1,188 points: every 37th
}

TEST_CASE("ipu: timing-only phases laid end to end equal the SystemC run on every hydronet point", "[ipu][sim][slow]") {
  CHECK(compare_hydronet_grid(1) == 1188);
}
