// The fast paths of timing-only runs, held equal to the slower paths they replace, phase by phase, over
// the shipped hydronet grid (workloads/sweeps/hydronet.json): every gather and scatter_add point on the
// simulated Bow, with uniform random indices, run both ways.
// - Timing-only runs lay their phases end to end from the compiled costs, without the SystemC kernel
//   (sim/phase_sequence.hpp).
// - Timing-only programs count their bulk transfers instead of listing them (sim::TransferCount); the
//   same programs built for a functional run list them. Also held on matmuls and losses, and on a four-chip
//   machine whose ops cross IPU-Links.
// Beside them, the two checks of what-if machines the design-space sweeps rest on: overrides equal to
// the base's figures give its cycles exactly, and twice the exchange bandwidth never slows an
// exchange-bound point.
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "models/ipu/ipu_backend.hpp"
#include "models/ipu/planning/plan.hpp"
#include "models/ipu/programs/op_program.hpp"
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

// The op's program built for `built_for` and run timing-only: listed (functional) or counted transfers.
sim::RunStats stats_as_built(const Op& op, const std::vector<std::int32_t>& indices, const ipu::IpuMachine& machine,
                             sim::Mode built_for) {
  const ipu::OpPlan plan = ipu::plan_op(op, indices, machine);
  const ipu::OpProgram program = ipu::build_op_program(op, plan, indices, machine, built_for);
  REQUIRE(program.program.timing_only == (built_for == sim::Mode::timing_only));
  sim::Engine& engine = ipu::engine_for(machine);
  engine.load(program.program, machine.chip, sim::Mode::timing_only);
  return engine.run();
}

void compare_counted_with_listed(const Op& op, const std::vector<std::int32_t>& indices, const ipu::IpuMachine& machine) {
  check_same_phases(stats_as_built(op, indices, machine, sim::Mode::timing_only),
                    stats_as_built(op, indices, machine, sim::Mode::functional));
}

// The counted transfers of the op's timing-only program whose ends are on different chips.
std::size_t counts_crossing_chips(const Op& op, const std::vector<std::int32_t>& indices, const ipu::IpuMachine& machine) {
  const ipu::OpProgram program =
      ipu::build_op_program(op, ipu::plan_op(op, indices, machine), indices, machine, sim::Mode::timing_only);
  std::size_t n = 0;
  for (const auto& step : program.program.steps) {
    for (const sim::TransferCount& c : step.exchange.counted) {
      n += machine.chip.chip_of(c.src_tile) != machine.chip.chip_of(c.dst_tile) ? 1 : 0;
    }
  }
  return n;
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

TEST_CASE("ipu: counted transfers time as the listed ones on a sample of the hydronet grid", "[ipu][sim][unit]") {
  const std::size_t points = for_hydronet_points(74, [](const Op& op, const std::vector<std::int32_t>& indices) {
    compare_counted_with_listed(op, indices, tilesim_test::bow());
  });
  CHECK(points == 17);
}

TEST_CASE("ipu: counted transfers time as the listed ones on every hydronet point", "[ipu][sim][unit][slow]") {
  const std::size_t points = for_hydronet_points(kWholeGridStride, [](const Op& op, const std::vector<std::int32_t>& indices) {
    compare_counted_with_listed(op, indices, tilesim_test::bow());
  });
  CHECK(points == (1188 + kWholeGridStride - 1) / kWholeGridStride);
}

TEST_CASE("ipu: counted transfers time as the listed ones on matmuls, losses and across the chips of a Bow-2000", "[ipu][sim][unit]") {
  const ipu::IpuMachine board = ipu::load_ipu_machine("bow-2000");
  REQUIRE(board.chip.num_chips() == 4);
  std::size_t crossing = 0;
  for (const ipu::IpuMachine* machine : {&tilesim_test::bow(), &board}) {
    for (const OpShape& shape : {OpShape{4096, 256, 65536}, OpShape{65536, 128, 8192}, OpShape{32768, 128, 65536}}) {
      for (const OpKind kind : {OpKind::gather, OpKind::scatter_add}) {
        OpGraph graph;
        graph.add_gather_scatter("op", kind, DType::float32, shape);
        const Op& op = graph.ops.front();
        std::mt19937_64 engine(shape.num_outputs);
        const auto indices = workloads::streams::uniform_indices(engine, op.num_indices(), op.index_range());
        INFO(machine->chip.name << " " << to_string(kind) << " " << shape.num_inputs << " x " << shape.num_features << " -> "
                                << shape.num_outputs);
        compare_counted_with_listed(op, indices, *machine);
        crossing += counts_crossing_chips(op, indices, *machine);
      }
    }
    for (const std::int64_t rows : {512, 20000}) {
      Op op;
      op.name = "mm";
      op.kind = OpKind::matmul;
      op.shape = {rows, 256, 0, 128};
      INFO(machine->chip.name << " matmul " << rows << " x 256 x 128");
      compare_counted_with_listed(op, {}, *machine);
    }
    for (const OpKind kind : {OpKind::loss, OpKind::loss_grad}) {
      for (const LossFn fn : {LossFn::mse, LossFn::cross_entropy}) {
        Op op;
        op.name = "loss";
        op.kind = kind;
        op.loss = fn;
        op.shape = {20000, 48, 1, 0};
        INFO(machine->chip.name << " " << to_string(kind) << " " << to_string(fn) << " 20000 x 48");
        compare_counted_with_listed(op, {}, *machine);
      }
    }
  }
  CHECK(crossing > 0);  // the board's large ops do count transfers over its links
}

TEST_CASE("ipu: a program built timing-only cannot be loaded functionally", "[ipu][sim][unit]") {
  OpGraph graph;
  graph.add_gather_scatter("op", OpKind::scatter_add, DType::float32, OpShape{64, 32, 512});
  const Op& op = graph.ops.front();
  const std::vector<std::int32_t> indices(64, 3);
  const ipu::OpProgram program =
      ipu::build_op_program(op, ipu::plan_op(op, indices, tilesim_test::bow()), indices, tilesim_test::bow(), sim::Mode::timing_only);
  bool counts = false;
  for (const auto& step : program.program.steps) counts = counts || !step.exchange.counted.empty() || step.exchange.tile_sums_used;
  CHECK(counts);
  sim::Engine& engine = ipu::engine_for(tilesim_test::bow());
  CHECK_THROWS_WITH(engine.load(program.program, tilesim_test::bow().chip, sim::Mode::functional),
                    Catch::Contains("built timing-only"));
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
