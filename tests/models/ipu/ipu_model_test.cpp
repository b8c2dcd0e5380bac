// The IPU model: codelet costs against hand-computed values, planner invariants, and functional
// equality of the simulated outputs with the reference over random shapes and edge cases.
#include <algorithm>
#include <random>
#include <set>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "common/strict_json.hpp"
#include "ir/reference/compare.hpp"
#include "ir/reference/reference.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "models/ipu/planning/phase_estimate.hpp"
#include "models/ipu/planning/plan.hpp"
#include "tests/support/ipu_test_support.hpp"
#include "tests/support/test_support.hpp"

using namespace tilesim;
using namespace tilesim::ipu;
using tilesim_test::bow;
using tilesim_test::input_error_of;
namespace fs = std::filesystem;

namespace {

using IpuModelProblem = tilesim_test::IpuProblem;
using tilesim_test::IndexPattern;
using tilesim_test::make_problem;

BackendResult run_model_ipu(IpuBackend& backend, const IpuModelProblem& p, bool timing_only = false) {
  RunOptions options;
  options.timing_only = timing_only;
  return backend.run(p.graph, p.values, options);
}

}  // namespace

TEST_CASE("machine files load with every figure and its source", "[ipu][machine][unit]") {
  for (const auto& name : shipped_ipu_machines()) {
    const auto m = load_ipu_machine(name);
    CHECK(m.chip.name == name);
    CHECK(m.chip.num_tiles > 0);
    CHECK(m.chip.worker_contexts == 6);
  }
  const auto names = shipped_ipu_machines();
  CHECK(std::set<std::string>(names.begin(), names.end()) == std::set<std::string>{"bow", "bow-2000", "mk1", "mk2", "pod16", "pod64"});
  CHECK(load_ipu_machine("bow").chip.num_tiles == 1472);
  CHECK(load_ipu_machine("bow").chip.clock_hz == 1.85e9);
  CHECK(load_ipu_machine("mk2").chip.clock_hz == 1.33e9);
  CHECK(load_ipu_machine("mk1").chip.num_tiles == 1216);
  CHECK(load_ipu_machine("mk1").chip.sram_bytes_per_tile == 256 * 1024);
  CHECK(load_ipu_machine("bow").chip.sram_bytes_per_tile == 624 * 1024);
}

TEST_CASE("machine files reject bare numbers, unknown keys and unknown names", "[ipu][machine][unit]") {
  auto doc = load_json_file(bow().file);
  doc["chip"]["num_tiles"] = 1472;  // no source
  try {
    parse_ipu_machine(doc, "x.json");
    FAIL("accepted a figure without a source");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("x.json: chip.num_tiles") != std::string::npos);
  }
  doc = load_json_file(bow().file);
  doc["chip"]["num_tile"] = {{"value", 3}, {"source", "typo"}};
  CHECK_THROWS_WITH(parse_ipu_machine(doc, "x.json"), Catch::Contains("chip.num_tile") && Catch::Contains("unknown key"));
  doc = load_json_file(bow().file);
  doc["codelets"]["supervisor_cycles"]["value"] = -1;
  CHECK_THROWS_WITH(parse_ipu_machine(doc, "x.json"), Catch::Contains("codelets.supervisor_cycles.value"));
  CHECK_THROWS_AS(load_ipu_machine("bowx"), InputError);
  CHECK_THROWS_WITH(load_ipu_machine("bowx"), Catch::Contains("bow, bow-2000, mk1, mk2"));
}

TEST_CASE("an unknown machine name with no machine files where tilesim looks names that folder", "[ipu][machine][unit]") {
  // An empty list ("expected one of  or a path") told nothing; the folder searched is what to fix.
  const std::string empty_dir = (fs::temp_directory_path() / ("tilesim-no-machines-" + std::to_string(::getpid()))).string();
  fs::create_directories(empty_dir);
  ::setenv("TILESIM_MACHINE_DIR", empty_dir.c_str(), 1);
  const std::string message = input_error_of([] { load_ipu_machine("bow"); });
  ::unsetenv("TILESIM_MACHINE_DIR");
  fs::remove_all(empty_dir);
  CHECK_THAT(message, Catch::Contains("unknown IPU machine \"bow\"") &&
                          Catch::Contains("no machine files (*.json) were found in " + empty_dir) &&
                          Catch::Contains("TILESIM_MACHINE_DIR") && !Catch::Contains("one of  "));
}

TEST_CASE("codelet costs match hand-computed poplibs estimates", "[ipu][costs][formula]") {
  // The formulas, with poplibs' own constants (the shipped Bow file carries fitted values for some).
  CodeletCosts c;
  c.supervisor_cycles = 11;
  c.multislice_prologue_worker_cycles = 30;
  c.multislice_in_range_worker_cycles = 19;
  c.multislice_out_of_range_worker_cycles = 8;
  c.multislice_elements_per_vector = 2;
  c.multislice_cycles_per_vector = 2;
  c.multiupdateadd_prologue_worker_cycles = 38;
  c.multiupdateadd_in_range_worker_cycles = 11;
  c.multiupdateadd_per_extra_element_worker_cycles = 3;
  c.multiupdateadd_out_of_range_worker_cycles = 5;
  c.fill_prologue_worker_cycles = 5;
  c.fill_bytes_per_worker_cycle = 8;
  c.index_transform_prologue_worker_cycles = 17;
  c.index_transform_worker_cycles_per_element = 7;
  c.reduce_prologue_worker_cycles = 16;
  c.reduce_per_vector_worker_cycles = 11;
  c.reduce_per_partial_worker_cycles = 1;
  c.reduce_elements_per_vector = 2;
  // MultiSlice: 30 + in * (19 + ceil(E/2)*2) + out * 8
  CHECK(multislice_worker_cycles(0, 0, 16, c) == 30);
  CHECK(multislice_worker_cycles(3, 2, 16, c) == 30 + 3 * (19 + 16) + 2 * 8);
  CHECK(multislice_worker_cycles(1, 0, 5, c) == 30 + 19 + 6);  // odd widths round up to a vector
  // MultiUpdateAdd: 38 + in * (11 + 3 * (E - 1)) + out * 5
  CHECK(multiupdateadd_worker_cycles(0, 10, 64, c) == 38 + 50);
  CHECK(multiupdateadd_worker_cycles(4, 6, 64, c) == 38 + 4 * (11 + 3 * 63) + 6 * 5);
  // Fill: 5 + bytes / 8, rounded up
  CHECK(fill_worker_cycles(64, c) == 13);
  CHECK(fill_worker_cycles(65, c) == 14);
  // Reduce: 16 + ceil(n/2) * (11 + (partials - 1))
  CHECK(reduce_worker_cycles(10, 4, c) == 16 + 5 * 14);
  CHECK(reduce_worker_cycles(1, 1, c) == 16 + 11);
  // IndexTransform: 17 + 7 per element
  CHECK(index_transform_worker_cycles(10, c) == 17 + 70);
  // The unfitted Mk1 file carries exactly these constants.
  const auto& mk1 = load_ipu_machine("mk1").codelets;
  CHECK(mk1.multislice_cycles_per_vector == c.multislice_cycles_per_vector);
  CHECK(mk1.multiupdateadd_per_extra_element_worker_cycles == c.multiupdateadd_per_extra_element_worker_cycles);
}

TEST_CASE("the planner's phase estimates follow the engine's cost rules", "[ipu][planner][formula]") {
  const IpuMachine& m = bow();
  // One vertex whose slowest worker takes 40 cycles: the estimate is what the engine charges the tile.
  sim::Vertex v;
  v.codelet = "Test";
  v.worker_cycles.assign(static_cast<std::size_t>(m.chip.worker_contexts), 40);
  v.worker_cycles.back() = 39;
  v.supervisor_cycles = m.codelets.supervisor_cycles;
  CHECK(vertex_estimate(40, m) == sim::tile_compute_cycles({&v}, m.chip.worker_contexts));
  CHECK(vertex_phase_estimate(40, m) == m.chip.compute_fixed_cycles + vertex_estimate(40, m));
  // Items shared evenly: the busiest worker takes ceil(items / workers) of them.
  const std::int64_t busiest = (13 + m.chip.worker_contexts - 1) / m.chip.worker_contexts;
  CHECK(spread_vertex_estimate(13, m, [](std::int64_t n) { return 10 * n; }) == vertex_estimate(10 * busiest, m));
  // An exchange: the fixed cost plus the engine's per-tile transfer time; no bytes, no phase.
  const sim::Cycles transfer = sim::tile_exchange_cycles(100, 40.0, m.chip.exchange_bytes_per_cycle);
  CHECK(exchange_transfer_estimate(100, 40, m) == transfer);
  CHECK(exchange_phase_estimate(100, 40, m) == m.chip.exchange_fixed_cycles + transfer);
  CHECK(exchange_phase_estimate(0, 0, m) == 0);
}

TEST_CASE("plans are normalised and use no more tiles than the machine has", "[ipu][planner][unit]") {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> e(0, 15);
  for (int trial = 0; trial < 200; ++trial) {
    OpGraph g;
    const OpShape shape{std::int64_t{1} << (e(rng) % 13), std::int64_t{1} << (e(rng) % 10), std::int64_t{1} << e(rng)};
    const Op& op = g.add_gather_scatter("op", trial % 2 ? OpKind::gather : OpKind::scatter_add, DType::float32, shape);
    const OpPlan plan = plan_op(op, bow());
    INFO(plan.to_json().dump());
    CHECK(plan.tiles_used <= bow().chip.num_tiles);
    CHECK(plan.tiles_used == plan.split.row_blocks * plan.split.column_blocks * plan.split.index_groups);
    // Normalised: the last block of every dimension is non-empty.
    CHECK((plan.split.row_blocks - 1) * plan.rows_per_block < plan.rows);
    CHECK((plan.split.column_blocks - 1) * plan.columns_per_block < shape.num_features);
    CHECK((plan.split.index_groups - 1) * plan.indices_per_group < op.num_indices());
    CHECK(plan.estimated_peak_tile_bytes <= bow().chip.sram_bytes_per_tile);
    // The chosen plan is no worse, by the planner's objective, than any other candidate within the same memory budget.
    const auto budget = static_cast<std::int64_t>(bow().planner.memory_fraction * bow().chip.sram_bytes_per_tile);
    if (plan.estimated_peak_tile_bytes <= budget) {
      for (const auto& s : candidate_splits(op, bow())) {
        const OpPlan other = estimate_plan(op, s, bow());
        if (other.estimated_peak_tile_bytes <= budget) CHECK(plan.objective_cycles <= other.objective_cycles);
      }
    }
  }
}

TEST_CASE("programs produce every output element exactly once, within memory, conserving exchange bytes", "[ipu][planner][unit]") {
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> e(0, 13);
  auto& engine = engine_for(bow());
  for (int trial = 0; trial < 60; ++trial) {
    const OpKind kind = trial % 2 ? OpKind::gather : OpKind::scatter_add;
    const OpShape shape{std::int64_t{1} << (e(rng) % 12), 1 + (std::int64_t{1} << (e(rng) % 9)), std::int64_t{1} << e(rng)};
    IpuModelProblem p = make_problem(kind, shape, static_cast<std::uint64_t>(trial));
    // Force splits in every dimension now and then, not only the planner's favourite.
    ipu::Split split{1 + trial % 4, 1 + (trial / 4) % 3, 1 + (trial / 12) % 5};
    const OpPlan plan = trial % 3 == 0 ? plan_op(p.op(), bow()) : estimate_plan(p.op(), split, bow());
    if (plan.estimated_peak_tile_bytes > bow().chip.sram_bytes_per_tile) continue;  // a forced split may not fit
    INFO("shape " << shape.num_inputs << "x" << shape.num_features << "x" << shape.num_outputs << " plan " << plan.to_json().dump());
    const OpProgram prog = build_op_program(p.op(), plan, p.values.i32(p.op().indices), bow());

    // Coverage: each output element in exactly one piece.
    std::vector<int> covered(static_cast<std::size_t>(shape.num_outputs * shape.num_features), 0);
    for (const auto& piece : prog.output) {
      for (std::int64_t r = 0; r < piece.rows; ++r) {
        for (std::int64_t c = 0; c < piece.cols; ++c) ++covered[static_cast<std::size_t>((piece.row_begin + r) * prog.output_width + piece.col_begin + c)];
      }
    }
    CHECK(std::all_of(covered.begin(), covered.end(), [](int n) { return n == 1; }));

    // Memory: no tile over capacity, and the planner's estimate bounds the real need.
    const auto bytes = prog.program.bytes_per_tile(bow().chip.num_tiles);
    CHECK(*std::max_element(bytes.begin(), bytes.end()) <= plan.estimated_peak_tile_bytes);

    // Exchange bytes: what the program sends is what the engine counts as received.
    std::int64_t sent_times_receivers = 0;
    for (const auto& step : prog.program.steps) {
      for (const auto& t : step.exchange.transfers) sent_times_receivers += t.total_bytes() * static_cast<std::int64_t>(t.dst.size());
    }
    engine.load(prog.program, bow().chip, sim::Mode::timing_only);
    const auto stats = engine.run();
    CHECK(stats.exchange_bytes_received == sent_times_receivers);
    CHECK(stats.peak_tile_bytes <= bow().chip.sram_bytes_per_tile);
  }
}

TEST_CASE("simulated outputs equal the reference and the CPU kernels over random shapes", "[ipu][functional][unit]") {
  IpuBackend ipu(bow(), "ipu:bow");
  kernels::cpu::CpuBackend cpu;
  RunOptions quick;
  quick.warmup = 0;
  quick.repeats = 1;
  std::mt19937_64 rng(17);
  std::uniform_int_distribution<int> e(0, 12);
  for (int trial = 0; trial < 24; ++trial) {
    const OpKind kind = trial % 2 ? OpKind::gather : OpKind::scatter_add;
    const OpShape shape{1 + (std::int64_t{1} << (e(rng) % 12)), 1 + e(rng) * 5, 1 + (std::int64_t{1} << e(rng))};
    const IpuModelProblem p = make_problem(kind, shape, static_cast<std::uint64_t>(100 + trial));
    INFO(to_string(kind) << " " << shape.num_inputs << "x" << shape.num_features << "x" << shape.num_outputs);
    const auto sim = run_model_ipu(ipu, p);
    REQUIRE(sim.ops.size() == 1);
    CHECK(sim.kind == ResultKind::simulated);
    CHECK(sim.ops[0].verified == true);
    cpu.run(p.graph, p.values, quick);
    const auto agreement = reference::compare_outputs(p.op(), p.values, ipu.outputs().f32(p.op().output),
                                                               cpu.outputs().f32(p.op().output));
    CHECK(agreement.equal);
  }
}

TEST_CASE("edge cases: one row, more tiles than rows, all indices equal, rows that receive nothing", "[ipu][functional][unit]") {
  IpuBackend ipu(bow(), "ipu:bow");
  struct Case {
    const char* what;
    OpKind kind;
    OpShape shape;
    IndexPattern pattern;
  };
  const Case cases[] = {
      {"gather from a one-row table", OpKind::gather, {1, 8, 100}, IndexPattern::uniform},
      {"scatter into one row", OpKind::scatter_add, {300, 8, 1}, IndexPattern::uniform},
      {"one element", OpKind::gather, {1, 1, 1}, IndexPattern::uniform},
      {"one message", OpKind::scatter_add, {1, 1, 1}, IndexPattern::uniform},
      {"more tiles than rows", OpKind::gather, {3, 4096, 5000}, IndexPattern::uniform},
      {"more tiles than output rows", OpKind::scatter_add, {5000, 2048, 3}, IndexPattern::uniform},
      {"all gather indices equal", OpKind::gather, {4096, 64, 20000}, IndexPattern::all_equal},
      {"all scatter indices equal", OpKind::scatter_add, {4096, 64, 2048}, IndexPattern::all_equal},
      {"half the output rows receive nothing", OpKind::scatter_add, {1000, 16, 4000}, IndexPattern::first_half_only},
      {"sorted scatter indices", OpKind::scatter_add, {8192, 32, 1024}, IndexPattern::sorted},
      {"odd feature count", OpKind::gather, {77, 3, 1234}, IndexPattern::uniform},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    const IpuModelProblem p = make_problem(c.kind, c.shape, 3, c.pattern);
    const auto r = run_model_ipu(ipu, p);
    CHECK(r.ops[0].verified == true);
    CHECK(*r.ops[0].cycles > 0);
  }
  // Rows that receive nothing are exactly zero.
  const IpuModelProblem p = make_problem(OpKind::scatter_add, {1000, 16, 4000}, 9, IndexPattern::first_half_only);
  run_model_ipu(ipu, p);
  const auto& out = ipu.outputs().f32(p.op().output);
  for (std::size_t e = 2000 * 16; e < out.size(); ++e) REQUIRE(out[e] == 0.0f);
}

TEST_CASE("timing-only runs give the same cycles as functional runs", "[ipu][timing][unit]") {
  IpuBackend ipu(bow(), "ipu:bow");
  for (const auto kind : {OpKind::gather, OpKind::scatter_add}) {
    const IpuModelProblem p = make_problem(kind, {512, 64, 4096}, 21);
    const auto functional = run_model_ipu(ipu, p, false);
    const auto timing = run_model_ipu(ipu, p, true);
    CHECK(*functional.ops[0].cycles == *timing.ops[0].cycles);
    CHECK(functional.ops[0].exchange_bytes == timing.ops[0].exchange_bytes);
    CHECK(!timing.ops[0].verified.has_value());
  }
}

TEST_CASE("repeated programs on one engine give the same cycles", "[ipu][engine][unit]") {
  IpuBackend ipu(bow(), "ipu:bow");
  IpuBackend mk1(load_ipu_machine("mk1"), "ipu:mk1");
  const IpuModelProblem a = make_problem(OpKind::gather, {256, 32, 1024}, 1);
  const IpuModelProblem b = make_problem(OpKind::scatter_add, {2048, 128, 512}, 2);
  const auto first = run_model_ipu(ipu, a);
  run_model_ipu(ipu, b);
  run_model_ipu(mk1, b);
  const auto again = run_model_ipu(ipu, a);
  CHECK(*first.ops[0].cycles == *again.ops[0].cycles);
  CHECK(again.ops[0].verified == true);
  // The same cycles at a slower clock take longer: mk2 runs the bow program at 1.33 GHz.
  IpuBackend mk2(load_ipu_machine("mk2"), "ipu:mk2");
  const auto slow = run_model_ipu(mk2, a);
  CHECK(*slow.ops[0].cycles == *first.ops[0].cycles);
  CHECK(slow.ops[0].time_s == Approx(first.ops[0].time_s * 1.85 / 1.33));
}

TEST_CASE("more work costs more cycles", "[ipu][timing][unit]") {
  IpuBackend ipu(bow(), "ipu:bow");
  auto cycles = [&](OpKind k, OpShape s) { return *run_model_ipu(ipu, make_problem(k, s, 4), true).ops[0].cycles; };
  CHECK(cycles(OpKind::gather, {4096, 512, 32768}) > cycles(OpKind::gather, {4096, 512, 1024}));
  CHECK(cycles(OpKind::gather, {4096, 512, 8192}) > cycles(OpKind::gather, {4096, 16, 8192}));
  CHECK(cycles(OpKind::scatter_add, {4096, 512, 4096}) > cycles(OpKind::scatter_add, {64, 512, 4096}));
  CHECK(cycles(OpKind::scatter_add, {4096, 512, 32768}) > cycles(OpKind::scatter_add, {4096, 16, 32768}));
}

TEST_CASE("a workload too big for the IPU's SRAM is a PlanError naming the tile and bytes", "[ipu][planner][unit]") {
  OpGraph g;
  const Op& op = g.add_gather_scatter("huge", OpKind::gather, DType::float32, {4'000'000, 1024, 64});
  try {
    plan_op(op, bow());
    FAIL("a 16 GB table was planned onto 900 MB of SRAM");
  } catch (const PlanError& e) {
    const std::string m = e.what();
    CHECK(e.code() == ExitCode::does_not_fit);
    CHECK(m.find("huge") != std::string::npos);
    CHECK(m.find("tile 0") != std::string::npos);
    CHECK(m.find("638976 bytes") != std::string::npos);
  }
  // What fits on a Bow can overflow a Mk1's 256 KiB tiles.
  OpGraph g2;
  const Op& mid = g2.add_gather_scatter("mid", OpKind::scatter_add, DType::float32, {64, 4096, 16384});
  CHECK_NOTHROW(plan_op(mid, bow()));
  CHECK_THROWS_AS(plan_op(mid, load_ipu_machine("mk1")), PlanError);
}
