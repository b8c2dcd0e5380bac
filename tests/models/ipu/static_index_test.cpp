// The IPU's static index mode (models/ipu/programs/static_index_program.hpp): gathers and scatters whose indices are
// compiled into the exchange. Outputs are checked against loops written here, on machines small
// enough that rows straddle tiles and hub rows need several exchange rounds; the backend is checked
// to use the mode only for indices known at compile time; and a model on a fixed graph runs
// verified end to end.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <tuple>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "models/ipu/programs/static_index_program.hpp"
#include "models/ipu/programs/tensor_io.hpp"
#include "workloads/workload.hpp"
#include "tests/support/ipu_test_support.hpp"
#include "tests/support/random_inputs.hpp"

using namespace tilesim;
using namespace tilesim::ipu;
using tilesim_test::bow;
using tilesim_test::direct_scatter;

namespace {

// Bow's costs on a handful of tiles with little SRAM, so that rows straddle tiles and exchanges need rounds.
IpuMachine tiny_machine(std::int32_t tiles, std::int64_t sram_bytes) {
  IpuMachine m = bow();
  m.chip.num_tiles = tiles;
  m.chip.sram_bytes_per_tile = sram_bytes;
  return m;
}

std::vector<float> values(std::int64_t n, std::uint64_t seed) {
  std::mt19937 rng(static_cast<std::mt19937::result_type>(seed));
  return tilesim_test::random_values(n, rng);
}

// Indices in [0, range) where row 0 is a hub taking `hub_share` of them and the rest are uniform.
std::vector<std::int32_t> hub_indices(std::int64_t n, std::int64_t range, double hub_share, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int32_t> uni(0, static_cast<std::int32_t>(range - 1));
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = coin(rng) < hub_share ? 0 : uni(rng);
  return v;
}

Op indexed_op(OpKind kind, std::int64_t num_inputs, std::int64_t num_features, std::int64_t num_outputs) {
  Op op;
  op.name = to_string(kind);
  op.kind = kind;
  op.shape.num_inputs = num_inputs;
  op.shape.num_features = num_features;
  op.shape.num_outputs = num_outputs;
  return op;
}

struct StaticRan {
  std::vector<float> out;
  sim::RunStats stats;
  std::size_t supersteps = 0;
};

// Builds and runs the static program of `op` on `machine` (functional) with these values and indices.
StaticRan run_static(const Op& op, const std::vector<float>& input, const std::vector<std::int32_t>& indices, const IpuMachine& machine) {
  const OpProgram prog = op.kind == OpKind::gather ? build_static_gather_program(op, indices, machine)
                                                   : build_static_scatter_program(op, indices, machine);
  auto& engine = engine_for(machine);
  engine.load(prog.program, machine.chip, sim::Mode::functional);
  write_pieces(engine, prog.input, input, prog.input_width);
  StaticRan r;
  r.stats = engine.run();
  r.supersteps = prog.program.steps.size();
  r.out.assign(static_cast<std::size_t>(op.output_rows() * op.output_cols()), std::nanf(""));
  read_pieces(engine, prog.output, r.out, prog.output_width);
  return r;
}

}  // namespace

TEST_CASE("static gather copies every looked-up row exactly, across tile boundaries", "[ipu][static][unit]") {
  // Widths that do not divide the tiles' shares, so table and output rows straddle tiles.
  for (const std::int64_t F : {1, 3, 16, 50}) {
    for (const std::int32_t tiles : {4, 13, 1472}) {
      INFO("F " << F << ", tiles " << tiles);
      const IpuMachine m = tiles == 1472 ? bow() : tiny_machine(tiles, 64 * 1024);
      const std::int64_t R = 37, N = 211;
      const Op op = indexed_op(OpKind::gather, R, F, N);
      const auto table = values(R * F, 11 + static_cast<std::uint64_t>(F));
      const auto idx = hub_indices(N, R, 0.2, 5);
      const StaticRan r = run_static(op, table, idx, m);
      for (std::int64_t e = 0; e < N; ++e) {
        for (std::int64_t c = 0; c < F; ++c) {
          REQUIRE(r.out[static_cast<std::size_t>(e * F + c)] == table[static_cast<std::size_t>(idx[static_cast<std::size_t>(e)] * F + c)]);
        }
      }
      // The exchange moves each output byte at most once (rows already on their tile are copied there).
      CHECK(r.stats.exchange_bytes_received <= N * F * 4);
      CHECK(r.stats.total_cycles > 0);
    }
  }
}

TEST_CASE("static scatters match a direct loop, including hub rows that need several rounds", "[ipu][static][unit]") {
  for (const OpKind kind : {OpKind::scatter_add, OpKind::scatter_mean, OpKind::scatter_max}) {
    for (const std::int64_t F : {5, 7, 33}) {
      INFO(to_string(kind) << ", F " << F);
      // 64 tiles of 2 KiB: the hub row's partials, one from nearly every tile, cannot all arrive in one exchange.
      const IpuMachine m = tiny_machine(64, 2 * 1024);
      const std::int64_t M = 300, rows = 41;
      const Op op = indexed_op(kind, M, F, rows);
      const auto msg = values(M * F, 7 + static_cast<std::uint64_t>(F));
      const auto idx = hub_indices(M, rows - 1, 0.3, 3);  // the last row receives nothing
      const StaticRan r = run_static(op, msg, idx, m);
      const auto want = direct_scatter(kind, msg, idx, F, rows);
      for (std::size_t i = 0; i < want.size(); ++i) {
        INFO("element " << i);
        REQUIRE(std::abs(static_cast<double>(r.out[i]) - want[i]) <= 1e-5 * (1.0 + std::abs(want[i])) * 8);
      }
      // combine, at least two rounds of folding, and the finish.
      CHECK(r.supersteps >= 3);
    }
  }
}

TEST_CASE("static scatter on the full Bow: one round, and partials combined on their tiles", "[ipu][static][unit]") {
  const std::int64_t M = 32768, F = 16, rows = 64;
  const Op op = indexed_op(OpKind::scatter_add, M, F, rows);
  const auto msg = values(M * F, 21);
  std::vector<std::int32_t> sorted = hub_indices(M, rows, 0.0, 9);
  std::sort(sorted.begin(), sorted.end());
  const StaticRan r = run_static(op, msg, sorted, bow());
  CHECK(r.supersteps == 2);  // combine + send, fold + finish
  const auto want = direct_scatter(OpKind::scatter_add, msg, sorted, F, rows);
  for (std::size_t i = 0; i < want.size(); ++i) REQUIRE(std::abs(r.out[i] - want[i]) <= 1e-4 * (1.0 + std::abs(want[i])));
  // Sorted messages sit next to their row's other messages: far fewer partials travel than messages.
  CHECK(r.stats.exchange_bytes_received < M * F * 4 / 4);
}

TEST_CASE("static programs that cannot fit are exit-3 errors naming the tile and the next step", "[ipu][static][unit]") {
  // Messages and output alone exceed a 1 KiB tile.
  const IpuMachine m = tiny_machine(2, 1024);
  const Op op = indexed_op(OpKind::scatter_add, 512, 8, 16);
  const auto msg = values(512 * 8, 1);
  const auto idx = hub_indices(512, 16, 0.0, 1);
  try {
    build_static_scatter_program(op, idx, m);
    FAIL("no PlanError");
  } catch (const PlanError& e) {
    CHECK_THAT(e.what(), Catch::Contains("tile 0") && Catch::Contains("bytes") && Catch::Contains("next step"));
  }
  CHECK(static_index_min_tile_bytes(op, m) > m.chip.sram_bytes_per_tile);
}

TEST_CASE("the backend compiles only indices known at compile time, and a model on a fixed graph verifies", "[ipu][static][unit]") {
  workloads::Workload w = workloads::parse_workload(nlohmann::json::parse(R"({
    "name": "static_sage", "seed": 4,
    "graph": {"generator": "erdos_renyi", "num_nodes": 300, "num_edges": 2400, "num_features": 24},
    "model": [{"layer": "sage", "name": "conv1", "out": 8, "activation": "relu"}, {"layer": "gcn", "name": "conv2", "out": 4}],
    "ops": [{"op": "gather", "num_inputs": 64, "num_features": 8, "num_outputs": 256}]
  })"), "static_sage.json");
  const workloads::Instance inst = workloads::instantiate(w);
  IpuBackend dynamic_backend(bow(), "ipu:bow"), static_backend(bow(), "ipu:bow:static", IndexMode::static_);
  static_backend.prepare(inst.graph);
  const BackendResult d = dynamic_backend.run(inst.graph, inst.values, RunOptions{});
  const BackendResult s = static_backend.run(inst.graph, inst.values, RunOptions{});
  REQUIRE(d.ops.size() == s.ops.size());
  std::size_t compiled = 0;
  for (std::size_t k = 0; k < s.ops.size(); ++k) {
    const Op& op = inst.graph.ops[k];
    INFO(op.name);
    CHECK(s.ops[k].verified == true);
    CHECK(d.ops[k].verified == true);
    const bool graph_indices = op.indices >= 0 && inst.graph.tensor(op.indices).known_at_compile_time;
    if (is_indexed(op.kind)) {
      const bool is_static = s.ops[k].plan.at("indices").get<std::string>().rfind("static", 0) == 0;
      CHECK(is_static == (graph_indices && static_index_kind(op.kind)));
      CHECK(d.ops[k].plan.at("indices").get<std::string>().rfind("dynamic", 0) == 0);
      compiled += is_static ? 1 : 0;
    } else {
      CHECK(s.ops[k].cycles == d.ops[k].cycles);  // dense ops are planned alike in both modes
    }
  }
  CHECK(compiled >= 4);  // SAGE's gather and mean, GCN's gather and sum at least
  // The generated gather of the ops list is dynamic in both modes, with the same cycles.
  CHECK(s.ops[0].cycles == d.ops[0].cycles);
}

TEST_CASE("schnet_block edges are run-time inputs, so the static mode leaves the op dynamic", "[ipu][static][unit]") {
  workloads::Workload w = workloads::parse_workload(nlohmann::json::parse(R"({
    "name": "block", "seed": 2,
    "ops": [{"op": "schnet_block", "num_inputs": 64, "num_features": 16, "num_outputs": 256}]
  })"), "block.json");
  const workloads::Instance inst = workloads::instantiate(w);
  IpuBackend dynamic_backend(bow(), "ipu:bow"), static_backend(bow(), "ipu:bow:static", IndexMode::static_);
  RunOptions timing;
  timing.timing_only = true;
  const BackendResult d = dynamic_backend.run(inst.graph, inst.values, timing);
  const BackendResult s = static_backend.run(inst.graph, inst.values, timing);
  REQUIRE(s.ops.size() == d.ops.size());
  std::size_t indexed = 0;
  for (std::size_t k = 0; k < s.ops.size(); ++k) {
    const Op& op = inst.graph.ops[k];
    if (op.indices >= 0) CHECK_FALSE(inst.graph.tensor(op.indices).known_at_compile_time);
    if (!is_indexed(op.kind)) continue;
    ++indexed;
    CHECK(s.ops[k].plan.at("indices").get<std::string>().rfind("dynamic", 0) == 0);
    CHECK(s.ops[k].cycles == d.ops[k].cycles);
  }
  CHECK(indexed >= 2);  // the block's gather and scatter at least
}

TEST_CASE("a scatter whose messages a later op reads folds in a copy, paying cycles and SRAM", "[ipu][static][unit]") {
  const IpuMachine m = tiny_machine(16, 16 * 1024);
  const std::int64_t M = 400, F = 6, rows = 37;
  const Op op = indexed_op(OpKind::scatter_add, M, F, rows);
  const auto msg = values(M * F, 12);
  const auto idx = hub_indices(M, rows, 0.1, 4);
  auto run = [&](bool keep) {
    const OpProgram prog = build_static_scatter_program(op, idx, m, keep);
    auto& engine = engine_for(m);
    engine.load(prog.program, m.chip, sim::Mode::functional);
    write_pieces(engine, prog.input, msg, prog.input_width);
    const sim::RunStats stats = engine.run();
    std::vector<float> out(static_cast<std::size_t>(rows * F)), after(msg.size());
    read_pieces(engine, prog.output, out, prog.output_width);
    read_pieces(engine, prog.input, after, prog.input_width);
    return std::make_tuple(stats, out, after);
  };
  const auto [in_place, out_in_place, msg_in_place] = run(false);
  const auto [copied, out_copied, msg_copied] = run(true);
  CHECK(out_copied == out_in_place);
  CHECK(msg_copied == msg);     // the messages survive for the later op
  CHECK(msg_in_place != msg);   // folded in place: the partials overwrote them
  CHECK(copied.total_cycles > in_place.total_cycles);
  CHECK(copied.peak_tile_bytes > in_place.peak_tile_bytes);
}
