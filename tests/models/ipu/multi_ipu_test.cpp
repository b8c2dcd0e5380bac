// IPU systems (several IPUs joined by IPU-Links): the engine's cost of transfers that cross chips
// against hand-computed link figures, a one-chip program costing the same on a system as on its IPU,
// ops too large for one IPU running verified on a system, the ladder's routes, and the system machine
// file's errors.
#include <random>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/strict_json.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "models/ipu/planning/plan.hpp"
#include "models/ipu/planning/system_estimate.hpp"
#include "sim/engine.hpp"
#include "tests/support/test_support.hpp"
#include "tests/support/ipu_test_support.hpp"

using namespace tilesim;
using namespace tilesim::ipu;
using tilesim_test::scratch;
using tilesim_test::write_text;

namespace {

// Two chips of four tiles; chip 0 -> 1 carries 2 bytes/cycle, each tile 4 bytes/cycle on chip.
sim::MachineConfig two_chips() {
  sim::MachineConfig c;
  c.name = "two-chips";
  c.num_tiles = 8;
  c.tiles_per_chip = 4;
  c.clock_hz = 1e9;
  c.sram_bytes_per_tile = 1 << 16;
  c.worker_contexts = 6;
  c.exchange_bytes_per_cycle = 4;
  c.sync_cycles = 100;
  c.links = {{0, 1, 2.0}, {1, 0, 2.0}};
  c.routes = {{}, {0}, {1}, {}};
  c.link_latency_cycles = 10;
  c.cross_chip_sync_cycles = 50;
  return c;
}

// One superstep: an exchange of 400 bytes from tile `from` to tile `to` for each pair.
sim::Program transfers(const std::vector<std::pair<sim::TileId, sim::TileId>>& pairs) {
  sim::Program p;
  p.name = "transfers";
  sim::Superstep step{"move", {"none", {}}, {"move", {}}};
  for (const auto& [from, to] : pairs) {
    const auto src = p.add_buffer("src", from, 400);
    const auto dst = p.add_buffer("dst", to, 400);
    step.exchange.transfers.push_back({{src, 0}, 400, {{dst, 0}}});
  }
  p.steps.push_back(std::move(step));
  return p;
}

sim::RunStats run(const sim::Program& program, const sim::MachineConfig& config) {
  sim::Engine& engine = engine_for(load_ipu_machine("bow"));
  engine.load(program, config, sim::Mode::timing_only);
  return engine.run();
}

// A Bow chip file cut to `tiles` tiles of `sram` bytes, and a system of `ipus` of them, in `dir`.
std::string tiny_system(const std::string& dir, std::int64_t tiles, std::int64_t sram, std::int64_t ipus) {
  nlohmann::json chip = load_json_file(load_ipu_machine("bow").file);
  chip["name"] = "tiny";
  chip["chip"]["num_tiles"]["value"] = tiles;
  chip["chip"]["sram_bytes_per_tile"]["value"] = sram;
  write_text(dir + "/tiny.json", chip.dump(2));
  nlohmann::json system = load_json_file(load_ipu_machine("bow-2000").file);
  system["name"] = "tiny-system";
  system["chip_file"] = "tiny.json";
  system["system"]["num_ipus"]["value"] = ipus;
  return write_text(dir + "/tiny-system.json", system.dump(2)).string();
}

using MultiIpuProblem = tilesim_test::IpuProblem;
using tilesim_test::make_problem;

}  // namespace

TEST_CASE("a transfer between chips moves at the link rate plus latency, and its sync spans the chips", "[multi-ipu][unit]") {
  const auto config = two_chips();
  // On chip: 400 bytes at 4 bytes/cycle, the plain sync.
  const auto on_chip = run(transfers({{0, 1}}), config);
  CHECK(on_chip.exchange_cycles == 100);
  CHECK(on_chip.sync_cycles == 100);
  // Across: 400 bytes at 2 bytes/cycle + 10 latency = 210 > 100 on the tiles; sync + 50.
  const auto across = run(transfers({{0, 4}}), config);
  CHECK(across.exchange_cycles == 210);
  CHECK(across.sync_cycles == 150);
  // Two flows share the link: 800 bytes / 2 + 10.
  const auto shared = run(transfers({{0, 4}, {1, 5}}), config);
  CHECK(shared.exchange_cycles == 410);
  // Opposite directions use different link groups: each 400 / 2 + 10.
  const auto opposite = run(transfers({{0, 4}, {5, 1}}), config);
  CHECK(opposite.exchange_cycles == 210);
  // A broadcast to two tiles of the far chip crosses once (400 / 2 + 10), then fans out.
  sim::Program broadcast = transfers({{0, 4}});
  const auto second = broadcast.add_buffer("dst2", 5, 400);
  broadcast.steps[0].exchange.transfers[0].dst.push_back({second, 0});
  CHECK(run(broadcast, config).exchange_cycles == 210);
}

TEST_CASE("the shipped Bow-2000 carries the link figures of its file", "[multi-ipu][machine][unit]") {
  const auto m = load_ipu_machine("bow-2000");
  const auto bow = load_ipu_machine("bow");
  CHECK(m.system.num_ipus == 4);
  CHECK(m.chip.num_tiles == 4 * bow.chip.num_tiles);
  CHECK(m.chip.tiles_per_chip == bow.chip.num_tiles);
  CHECK(m.chip.num_chips() == 4);
  CHECK(m.chip.sram_bytes_per_tile == bow.chip.sram_bytes_per_tile);
  CHECK(m.chip.exchange_bytes_per_cycle == bow.chip.exchange_bytes_per_cycle);
  // 128 x 1024^3 bit/s x 0.85 / 8 per link, at 1.85 GHz.
  const double link = 137438953472.0 * 0.85 / 8 / 1.85e9;
  CHECK(m.system.link_bytes_per_cycle == Approx(link));
  // A ladder of two rungs: every pair of IPUs is joined directly; 4 links to the pair, 2 otherwise.
  for (std::int32_t a = 0; a < 4; ++a) {
    for (std::int32_t b = 0; b < 4; ++b) {
      const auto& route = m.chip.routes[static_cast<std::size_t>(a * 4 + b)];
      if (a == b) {
        CHECK(route.empty());
        continue;
      }
      REQUIRE(route.size() == 1);
      const auto& group = m.chip.links[static_cast<std::size_t>(route[0])];
      CHECK(group.from_chip == a);
      CHECK(group.to_chip == b);
      CHECK(group.bytes_per_cycle == Approx((a / 2 == b / 2 ? 4 : 2) * link));
    }
  }
}

TEST_CASE("a longer ladder routes across the rung first, then up or down", "[multi-ipu][machine][unit]") {
  sim::MachineConfig c;
  IpuSystem s;
  s.num_ipus = 8;
  s.link_bytes_per_cycle = 1;
  s.links_to_pair = 4;
  s.links_up_down = 2;
  s.links_cross_rung = 0;
  set_ladder_links(c, s);
  // IPU 0 (rung 0, side 0) to IPU 7 (rung 3, side 1): 0 -> 1, 1 -> 3 -> 5 -> 7.
  const auto& route = c.routes[0 * 8 + 7];
  REQUIRE(route.size() == 4);
  std::vector<std::int32_t> path{0};
  for (auto l : route) path.push_back(c.links[static_cast<std::size_t>(l)].to_chip);
  CHECK(path == std::vector<std::int32_t>{0, 1, 3, 5, 7});
  CHECK(c.links[static_cast<std::size_t>(route[0])].bytes_per_cycle == 4);
  CHECK(c.links[static_cast<std::size_t>(route[1])].bytes_per_cycle == 2);
}

TEST_CASE("a program on one IPU of a system costs what it costs on that IPU alone", "[multi-ipu][unit]") {
  const auto bow = load_ipu_machine("bow");
  const auto system = load_ipu_machine("bow-2000");
  MultiIpuProblem p = make_problem(OpKind::gather, {512, 16, 4096}, 5);
  const Op& op = p.graph.ops.front();
  const auto& indices = p.values.i32(op.indices);
  const OpPlan plan = plan_op(op, indices, bow);
  const OpProgram program = build_op_program(op, plan, indices, bow);
  const auto alone = run(program.program, bow.chip);
  const auto in_system = run(program.program, system.chip);
  CHECK(in_system.total_cycles == alone.total_cycles);
  CHECK(in_system.sync_cycles == alone.sync_cycles);
  CHECK(in_system.exchange_cycles == alone.exchange_cycles);
}

TEST_CASE("ops too large for one IPU run verified on a system, paying for the links", "[multi-ipu][unit]") {
  const auto dir = scratch("multi_ipu").string();
  const auto system = load_ipu_machine(tiny_system(dir, 16, 16384, 4));
  const auto chip = load_ipu_machine(dir + "/tiny.json");
  REQUIRE(system.chip.num_tiles == 64);
  // The same 64 tiles as one chip (no links): what the system costs beyond it is the links' doing.
  IpuMachine one_chip = system;
  one_chip.chip.tiles_per_chip = 0;
  one_chip.chip.links.clear();
  one_chip.chip.routes.clear();

  for (OpKind kind : {OpKind::gather, OpKind::scatter_add}) {
    INFO(to_string(kind));
    const OpShape shape = kind == OpKind::gather ? OpShape{256, 16, 4096} : OpShape{4096, 16, 256};
    MultiIpuProblem p = make_problem(kind, shape, 11);
    const Op& op = p.graph.ops.front();
    CHECK_THROWS_AS(plan_op(op, p.values.i32(op.indices), chip), PlanError);
    const OpPlan plan = plan_op(op, p.values.i32(op.indices), system);
    CHECK(plan.tiles_used > 16);  // it needs more than one IPU's tiles
    IpuBackend backend(system, "ipu:tiny-system");
    const auto result = backend.run(p.graph, p.values, {});
    REQUIRE(result.ops.size() == 1);
    CHECK(result.ops[0].verified);
    IpuBackend flat(one_chip, "ipu:one-chip");
    const auto flat_result = flat.run(p.graph, p.values, {});
    CHECK(flat_result.ops[0].verified);
    CHECK(result.cycles > flat_result.cycles);
  }
}

TEST_CASE("the planner charges the IPU-Links a split's exchanges cross", "[multi-ipu][plan][unit]") {
  auto system = load_ipu_machine("bow-2000");
  // As inside a graph: the output goes on to the linear layout, over all four IPUs.
  system.planner.gather_output_to_linear_layout = true;
  IpuMachine one_chip = system;  // the same tiles as one chip
  one_chip.chip.tiles_per_chip = 0;
  one_chip.chip.links.clear();
  one_chip.chip.routes.clear();
  MultiIpuProblem p = make_problem(OpKind::gather, {4096, 64, 65536}, 2);
  const Op& op = p.graph.ops.front();
  // 1 x 32 x 128 = 4096 tiles: three IPUs.
  const OpPlan across = estimate_plan(op, {1, 32, 128}, system);
  const OpPlan flat = estimate_plan(op, {1, 32, 128}, one_chip);
  CHECK(across.estimated_cycles > flat.estimated_cycles);
  CHECK(across.objective_cycles - flat.objective_cycles == across.estimated_cycles - flat.estimated_cycles);
  bool names_links = false;
  for (const auto& phase : across.phases) names_links = names_links || phase.name.rfind("exchange: IPU-Links", 0) == 0;
  CHECK(names_links);
  // A single IPU's estimates are untouched.
  const auto bow = load_ipu_machine("bow");
  for (const auto& phase : estimate_plan(op, {1, 32, 32}, bow).phases) CHECK(phase.name.find("IPU-Links") == std::string::npos);
}

TEST_CASE("system machine files: unknown keys, a missing or nested chip file, an odd ladder", "[multi-ipu][machine][unit]") {
  const auto dir = scratch("multi_ipu_errors").string();
  const std::string good = tiny_system(dir, 16, 16384, 4);
  auto doc = nlohmann::json::parse(tilesim_test::slurp(good));

  auto bad = doc;
  bad["system"]["num_ipu"] = {{"value", 4}, {"source", "typo"}};
  CHECK_THROWS_WITH(parse_ipu_machine(bad, good), Catch::Contains("system.num_ipu") && Catch::Contains("unknown key"));
  bad = doc;
  bad["chip"] = nlohmann::json::object();
  CHECK_THROWS_WITH(parse_ipu_machine(bad, good), Catch::Contains("chip") && Catch::Contains("unknown key"));
  bad = doc;
  bad["chip_file"] = "nowhere.json";
  CHECK_THROWS_AS(parse_ipu_machine(bad, good), InputError);
  CHECK_THROWS_WITH(parse_ipu_machine(bad, good), Catch::Contains("chip_file") && Catch::Contains("nowhere.json") &&
                                                      Catch::Contains("no such file"));
  bad = doc;
  bad["chip_file"] = "tiny-system.json";
  CHECK_THROWS_WITH(parse_ipu_machine(bad, good), Catch::Contains("chip_file") && Catch::Contains("system file"));
  bad = doc;
  bad["system"]["num_ipus"]["value"] = 3;
  CHECK_THROWS_WITH(parse_ipu_machine(bad, good), Catch::Contains("system.num_ipus") && Catch::Contains("even"));
  bad = doc;
  bad["system"]["link_efficiency"] = 0.85;  // no source
  CHECK_THROWS_WITH(parse_ipu_machine(bad, good), Catch::Contains("system.link_efficiency"));
}

TEST_CASE("an op no IPU fits names the shipped IPU system as the next step", "[multi-ipu][unit]") {
  MultiIpuProblem p = make_problem(OpKind::gather, {1024, 16, 4096}, 3);
  const auto dir = scratch("multi_ipu_advice").string();
  tiny_system(dir, 4, 2048, 4);
  const auto chip = load_ipu_machine(dir + "/tiny.json");
  try {
    plan_op(p.graph.ops.front(), chip);
    FAIL("a 256 KiB output fitted 4 tiles of 2 KiB");
  } catch (const PlanError& e) {
    CHECK_THAT(e.what(), Catch::Contains("ipu:bow-2000 (4 IPUs)"));
  }
}

TEST_CASE("an exchange phase that moves nothing pays no IPU-Links and no global sync", "[multi-ipu][plan][unit]") {
  const auto system = load_ipu_machine("bow-2000");
  OpPlan plan;
  plan.tiles_used = system.chip.num_tiles;  // spans every IPU
  plan.phases.push_back({"exchange: nothing", 0, PhaseTraffic::among_plan_tiles});
  plan.phases.push_back({"exchange: nothing to the linear layout", 0, PhaseTraffic::linear_layout});
  add_cross_chip_estimate(plan, system);
  CHECK(plan.phases.size() == 2);
  CHECK(plan.estimated_cycles == 0);
  // The same phase with bytes to move does pay the links.
  OpPlan moving = plan;
  moving.phases.front().cycles = 10000;
  add_cross_chip_estimate(moving, system);
  CHECK(moving.phases.size() > 2);
}
