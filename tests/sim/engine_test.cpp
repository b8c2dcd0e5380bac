// The BSP engine end to end: hand-computed cycles of small programs, functional bytes, timing-only
// equivalence, SRAM capacity, repeated programs on the one engine, and load-time validation.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "sim/engine.hpp"
#include "tests/support/sim_test_machine.hpp"

using namespace tilesim::sim;

namespace {

// One elaboration per process, shared by every test, with the most tiles a test here needs (a ring over
// a Bow's 1472 tiles), not the 4 x 1472 of the largest shipped system: CTest runs each test case in a
// process of its own, and elaborating four times the tiles would cost each of them. In a one-process
// run beside the IPU tests, the larger engine they elaborate serves these tests as well.
constexpr std::int32_t engine_tile_slots = 1472;

Engine& engine() { return Engine::instance(engine_tile_slots); }

MachineConfig tiny_machine() {
  return tilesim_test::sim_test_machine("tiny", 8, 1024, 3);
}

Vertex vertex(std::string codelet, std::vector<Cycles> worker_cycles, Cycles supervisor_cycles,
              std::vector<BufferRef> buffers, std::function<void(const VertexContext&)> execute = {}) {
  Vertex v;
  v.codelet = std::move(codelet);
  v.worker_cycles = std::move(worker_cycles);
  v.supervisor_cycles = supervisor_cycles;
  v.buffers = std::move(buffers);
  v.execute = std::move(execute);
  return v;
}

template <class T>
std::vector<T> read_all(BufferId buffer, std::size_t count) {
  std::vector<T> values(count);
  engine().read(buffer, 0, values.data(), static_cast<std::int64_t>(count * sizeof(T)));
  return values;
}

// Two supersteps on the 8-tile machine (6 contexts, supertiles of 2, 4 bytes/cycle, sync 10,
// exchange fixed 5, compute fixed 3):
//   produce: compute  tile 0 Fill (multi, 6 x 30 + 7 = 187) writes a = 1..8;
//                     tile 1 Iota (single, 6 x 50 + 4 = 304) writes b = 100..103   -> 3 + 304 = 307
//            sync 10
//            exchange a (32 B) -> c on tile 2 and d on tile 3 (one supertile: 16 B each effective),
//                     b (16 B) -> e on tile 4; tile 0 sends 32 B = 8 cycles, slowest -> 5 + 8 = 13
//   reduce:  compute  tile 2 Sum (single, 6 x 40 + 2 = 242) sum = sum(c);
//                     tile 3 Double (multi, 6 x 1 + 0 = 6) d *= 2                   -> 3 + 242 = 245
//            sync 10
//            exchange d (32 B) -> f on tile 5 and g on tile 6 (two supertiles: 32 B each, 8 cycles),
//                     sum (4 B) -> result on tile 4 (1 cycle); slowest tile 3 (8)   -> 5 + 8 = 13
// Total 307 + 10 + 13 + 245 + 10 + 13 = 598 cycles.
struct TinyProgram {
  Program program;
  BufferId a, b, c, d, e, sum, result, f, g, tag, tag2;
};

TinyProgram tiny_program() {
  TinyProgram t;
  Program& p = t.program;
  p.name = "tiny_two_steps";
  t.a = p.add_buffer("a", 0, 32);
  t.b = p.add_buffer("b", 1, 16);
  t.c = p.add_buffer("c", 2, 32);
  t.d = p.add_buffer("d", 3, 32);
  t.e = p.add_buffer("e", 4, 16);
  t.sum = p.add_buffer("sum", 2, 4);
  t.result = p.add_buffer("result", 4, 4);
  t.f = p.add_buffer("f", 5, 32);
  t.g = p.add_buffer("g", 6, 32);
  t.tag = p.add_buffer("tag", 7, 3);
  t.tag2 = p.add_buffer("tag2", 7, 8);  // at offset 8 after alignment: tile 7 uses 16 bytes

  Superstep produce;
  produce.name = "produce";
  produce.compute.name = "fill";
  produce.compute.vertices.push_back(
      {0, vertex("Fill", {10, 20, 30, 5, 5, 5}, 7, {{t.a, 0}}, [](const VertexContext& ctx) {
         for (int i = 0; i < 8; ++i) ctx.as<std::int32_t>(0)[i] = i + 1;
       })});
  produce.compute.vertices.push_back({1, vertex("Iota", {50}, 4, {{t.b, 0}}, [](const VertexContext& ctx) {
                                        for (int i = 0; i < 4; ++i) ctx.as<std::int32_t>(0)[i] = 100 + i;
                                      })});
  produce.exchange.name = "spread";
  produce.exchange.transfers.push_back({{t.a, 0}, 32, {{t.c, 0}, {t.d, 0}}});
  produce.exchange.transfers.push_back({{t.b, 0}, 16, {{t.e, 0}}});
  p.steps.push_back(produce);

  Superstep reduce;
  reduce.name = "reduce";
  reduce.compute.name = "sum";
  reduce.compute.vertices.push_back({2, vertex("Sum", {40}, 2, {{t.c, 0}, {t.sum, 0}}, [](const VertexContext& ctx) {
                                       std::int32_t total = 0;
                                       for (int i = 0; i < 8; ++i) total += ctx.as<std::int32_t>(0)[i];
                                       *ctx.as<std::int32_t>(1) = total;
                                     })});
  reduce.compute.vertices.push_back(
      {3, vertex("Double", {1, 1, 1, 1, 1, 1}, 0, {{t.d, 0}}, [](const VertexContext& ctx) {
         for (int i = 0; i < 8; ++i) ctx.as<std::int32_t>(0)[i] *= 2;
       })});
  reduce.exchange.name = "collect";
  reduce.exchange.transfers.push_back({{t.d, 0}, 32, {{t.f, 0}, {t.g, 0}}});
  reduce.exchange.transfers.push_back({{t.sum, 0}, 4, {{t.result, 0}}});
  p.steps.push_back(reduce);
  return t;
}

void check_tiny_cycles(const RunStats& stats) {
  CHECK(stats.program == "tiny_two_steps");
  CHECK(stats.total_cycles == 598);
  CHECK(stats.compute_cycles == 307 + 245);
  CHECK(stats.sync_cycles == 20);
  CHECK(stats.exchange_cycles == 26);
  CHECK(stats.exchange_bytes_sent == 32 + 16 + 32 + 4);
  CHECK(stats.exchange_bytes_received == 64 + 16 + 64 + 4);
  CHECK(stats.peak_tile_bytes == 36);  // tile 2: c (32) + sum (4)
  CHECK(stats.peak_tile == 2);
  CHECK(stats.vertices == 4);
  CHECK(stats.supersteps == 2);

  struct Expected {
    const char* name;
    PhaseKind kind;
    Cycles start, cycles;
    TileId slowest;
    std::int32_t active;
    std::int64_t bytes;
  };
  const std::vector<Expected> expected = {
      {"produce", PhaseKind::compute, 0, 307, 1, 2, 0},    {"produce", PhaseKind::sync, 307, 10, -1, 0, 0},
      {"produce", PhaseKind::exchange, 317, 13, 0, 5, 80}, {"reduce", PhaseKind::compute, 330, 245, 2, 2, 0},
      {"reduce", PhaseKind::sync, 575, 10, -1, 0, 0},      {"reduce", PhaseKind::exchange, 585, 13, 3, 5, 68},
  };
  REQUIRE(stats.phases.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("phase " << i);
    CHECK(stats.phases[i].name == expected[i].name);
    CHECK(stats.phases[i].kind == expected[i].kind);
    CHECK(stats.phases[i].start_cycle == expected[i].start);
    CHECK(stats.phases[i].cycles == expected[i].cycles);
    CHECK(stats.phases[i].slowest_tile == expected[i].slowest);
    CHECK(stats.phases[i].active_tiles == expected[i].active);
    CHECK(stats.phases[i].bytes == expected[i].bytes);
  }
}

// One exchange only: each of `sources` sends `bytes` to a buffer on every tile of `receivers`.
Program broadcast_program(const std::vector<TileId>& sources, const std::vector<TileId>& receivers,
                          std::int64_t bytes) {
  Program p;
  p.name = "broadcast";
  Superstep step;
  step.name = "broadcast";
  for (TileId s : sources) {
    const BufferId src = p.add_buffer("src" + std::to_string(s), s, bytes);
    Transfer transfer{{src, 0}, bytes, {}};
    for (TileId r : receivers) {
      transfer.dst.push_back({p.add_buffer("dst" + std::to_string(s) + "_" + std::to_string(r), r, bytes), 0});
    }
    step.exchange.transfers.push_back(transfer);
  }
  p.steps.push_back(step);
  return p;
}

// A ring on `tiles` tiles: every superstep each tile adds its id to its value (multi-worker vertex
// whose cost depends on the tile), then sends it to the next tile.
struct RingProgram {
  Program program;
  std::vector<BufferId> in, out;
};

RingProgram ring_program(std::int32_t tiles, std::int32_t supersteps) {
  RingProgram r;
  r.program.name = "ring";
  for (TileId t = 0; t < tiles; ++t) {
    r.in.push_back(r.program.add_buffer("in", t, 8));
    r.out.push_back(r.program.add_buffer("out", t, 8));
  }
  for (std::int32_t s = 0; s < supersteps; ++s) {
    Superstep step;
    step.name = "ring" + std::to_string(s);
    step.compute.name = "add";
    for (TileId t = 0; t < tiles; ++t) {
      const Cycles c = 10 + (t * 7 + s) % 13;
      step.compute.vertices.push_back(
          {t, vertex("Add", {c, c, c, c, c, c + 1}, 5, {{r.in[t], 0}, {r.out[t], 0}},
                     [t](const VertexContext& ctx) { *ctx.as<std::int64_t>(1) = *ctx.as<std::int64_t>(0) + t; })});
      step.exchange.transfers.push_back({{r.out[t], 0}, 8, {{r.in[(t + 1) % tiles], 0}}});
    }
    r.program.steps.push_back(step);
  }
  return r;
}

}  // namespace

TEST_CASE("engine: a tiny two-superstep program takes the hand-computed cycles", "[sim][engine][formula]") {
  auto t = tiny_program();
  engine().load(t.program, tiny_machine(), Mode::functional);
  check_tiny_cycles(engine().run());
}

TEST_CASE("engine: functional mode runs vertices and moves bytes, broadcasts included", "[sim][engine][unit]") {
  auto t = tiny_program();
  engine().load(t.program, tiny_machine(), Mode::functional);
  engine().run();
  CHECK(read_all<std::int32_t>(t.a, 8) == std::vector<std::int32_t>{1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(read_all<std::int32_t>(t.c, 8) == std::vector<std::int32_t>{1, 2, 3, 4, 5, 6, 7, 8});  // broadcast to the pair
  CHECK(read_all<std::int32_t>(t.d, 8) == std::vector<std::int32_t>{2, 4, 6, 8, 10, 12, 14, 16});
  CHECK(read_all<std::int32_t>(t.e, 4) == std::vector<std::int32_t>{100, 101, 102, 103});
  CHECK(read_all<std::int32_t>(t.result, 1) == std::vector<std::int32_t>{36});
  CHECK(read_all<std::int32_t>(t.f, 8) == std::vector<std::int32_t>{2, 4, 6, 8, 10, 12, 14, 16});
  CHECK(read_all<std::int32_t>(t.g, 8) == std::vector<std::int32_t>{2, 4, 6, 8, 10, 12, 14, 16});
}

TEST_CASE("engine: host writes are seen by vertices and host reads see partial ranges", "[sim][engine][unit]") {
  auto t = tiny_program();
  // Without the Fill vertex, whatever the host wrote into a is what the exchange moves.
  t.program.steps[0].compute.vertices.erase(t.program.steps[0].compute.vertices.begin());
  engine().load(t.program, tiny_machine(), Mode::functional);
  const std::vector<std::int32_t> values = {5, 5, 5, 5, 1, 1, 1, 1};
  engine().write(t.a, 0, values.data(), 32);
  engine().write(t.tag, 0, "xyz", 3);
  engine().run();
  CHECK(read_all<std::int32_t>(t.result, 1) == std::vector<std::int32_t>{24});
  std::int32_t tail[2] = {0, 0};
  engine().read(t.c, 24, tail, 8);
  CHECK(tail[0] == 1);
  CHECK(tail[1] == 1);
  char tag[3] = {};
  engine().read(t.tag, 0, tag, 3);
  CHECK(std::string(tag, 3) == "xyz");
}

TEST_CASE("engine: timing-only mode gives the same cycles as functional mode", "[sim][engine][unit]") {
  auto t = tiny_program();
  engine().load(t.program, tiny_machine(), Mode::functional);
  const RunStats functional = engine().run();
  engine().load(t.program, tiny_machine(), Mode::timing_only);
  const RunStats timing = engine().run();
  check_tiny_cycles(timing);
  CHECK(timing.total_cycles == functional.total_cycles);
  REQUIRE(timing.phases.size() == functional.phases.size());
  for (std::size_t i = 0; i < timing.phases.size(); ++i) {
    CHECK(timing.phases[i].cycles == functional.phases[i].cycles);
    CHECK(timing.phases[i].slowest_tile == functional.phases[i].slowest_tile);
  }

  // On the whole machine too.
  MachineConfig full = tiny_machine();
  full.num_tiles = 1472;
  auto ring = ring_program(full.num_tiles, 4);
  engine().load(ring.program, full, Mode::timing_only);
  const RunStats ring_timing = engine().run();
  engine().load(ring.program, full, Mode::functional);
  const RunStats ring_functional = engine().run();
  CHECK(ring_timing.total_cycles == ring_functional.total_cycles);
  CHECK(ring_timing.total_cycles > 0);
}

// The program with every transfer counted (sim::TransferCount, sim::BroadcastCount), built timing-only.
Program counted_copy(const Program& listed) {
  Program counted = listed;
  counted.timing_only = true;
  for (Superstep& step : counted.steps) {
    ExchangePlan& plan = step.exchange;
    for (const Transfer& t : plan.transfers) {
      if (t.dst.size() == 1) {
        plan.count(listed.tile_of(t.src.buffer), listed.tile_of(t.dst[0].buffer), t.total_bytes(), t.blocks);
        continue;
      }
      std::vector<TileId> tiles;
      for (const auto& d : t.dst) tiles.push_back(listed.tile_of(d.buffer));
      plan.count_broadcast(listed.tile_of(t.src.buffer), plan.add_destination_set(tiles), t.total_bytes(), t.blocks);
    }
    plan.transfers.clear();
  }
  return counted;
}

TEST_CASE("engine: counted transfers and broadcasts take the listed ones' cycles, bad counts are refused", "[sim][engine][unit]") {
  const auto t = tiny_program();
  Program counted = counted_copy(t.program);
  std::size_t broadcasts = 0;
  for (const auto& step : counted.steps) broadcasts += step.exchange.broadcasts_counted.size();
  REQUIRE(broadcasts > 0);
  engine().load(counted, tiny_machine(), Mode::timing_only);
  const RunStats stats = engine().run();
  check_tiny_cycles(stats);
  engine().load(t.program, tiny_machine(), Mode::timing_only);
  const RunStats listed = engine().run();
  CHECK(stats.exchange_bytes_received == listed.exchange_bytes_received);
  CHECK(stats.exchange_bytes_sent == listed.exchange_bytes_sent);
  CHECK_THROWS_WITH(engine().load(counted, tiny_machine(), Mode::functional), Catch::Contains("built timing-only"));

  Program off_machine = counted;
  off_machine.steps.front().exchange.count(0, 99, 4, 1);
  CHECK_THROWS_WITH(engine().load(off_machine, tiny_machine(), Mode::timing_only), Catch::Contains("to tile 99 (of 8)"));
  Program bad_set = counted;
  bad_set.steps.front().exchange.destination_sets.push_back({5, 2});  // unsorted
  CHECK_THROWS_WITH(engine().load(bad_set, tiny_machine(), Mode::timing_only), Catch::Contains("unsorted"));
  Program no_set = counted;
  no_set.steps.front().exchange.count_broadcast(0, 7, 4, 1);
  CHECK_THROWS_WITH(engine().load(no_set, tiny_machine(), Mode::timing_only), Catch::Contains("to destination set 7"));
}

TEST_CASE("engine: timing-only mode executes nothing and refuses host access", "[sim][engine][unit]") {
  auto t = tiny_program();
  bool executed = false;
  t.program.steps[0].compute.vertices[0].vertex.execute = [&executed](const VertexContext&) { executed = true; };
  engine().load(t.program, tiny_machine(), Mode::timing_only);
  engine().run();
  CHECK_FALSE(executed);
  std::int32_t value = 0;
  CHECK_THROWS_AS(engine().read(t.a, 0, &value, 4), std::logic_error);
  CHECK_THROWS_AS(engine().write(t.a, 0, &value, 4), std::logic_error);
}

TEST_CASE("engine: a supertile's tiles receiving the same transfer share the bus at a multiple of the rate",
          "[sim][engine][unit]") {
  MachineConfig m = tiny_machine();
  // Tiles 0 and 1 each broadcast 16 bytes. Received by the pair 2, 3 (one supertile): 32 bytes each,
  // counted 16 -> 4 cycles. Received by 3 and 4 (two supertiles): 32 bytes each -> 8 cycles.
  engine().load(broadcast_program({0, 1}, {2, 3}, 16), m, Mode::functional);
  auto pair = engine().run();
  REQUIRE(pair.phases.size() == 2);  // sync, exchange (no compute)
  CHECK(pair.phases[0].kind == PhaseKind::sync);
  CHECK(pair.phases[1].cycles == 5 + 4);
  CHECK(pair.phases[1].bytes == 64);
  CHECK(pair.exchange_bytes_sent == 32);
  engine().load(broadcast_program({0, 1}, {3, 4}, 16), m, Mode::functional);
  auto split = engine().run();
  CHECK(split.phases[1].cycles == 5 + 8);
  CHECK(split.phases[1].slowest_tile == 3);

  // Supertiles of 4, three of whose tiles receive: 72 bytes each, counted 24 -> 6 cycles (not 18).
  m.tiles_per_supertile = 4;
  engine().load(broadcast_program({4, 5, 6}, {0, 1, 2}, 24), m, Mode::timing_only);
  CHECK(engine().run().phases[1].cycles == 5 + 6);
}

TEST_CASE("engine: a ring over all 1472 tiles moves every tile's value", "[sim][engine][unit]") {
  MachineConfig m = tiny_machine();
  m.num_tiles = 1472;
  const std::int32_t steps = 3;
  auto ring = ring_program(m.num_tiles, steps);
  engine().load(ring.program, m, Mode::functional);
  for (TileId t = 0; t < m.num_tiles; ++t) {
    const std::int64_t value = 1000 * t;
    engine().write(ring.in[t], 0, &value, 8);
  }
  const RunStats stats = engine().run();
  // Reference: the same ring on the host.
  std::vector<std::int64_t> values(m.num_tiles);
  for (TileId t = 0; t < m.num_tiles; ++t) values[t] = 1000 * t;
  for (std::int32_t s = 0; s < steps; ++s) {
    std::vector<std::int64_t> next(m.num_tiles);
    for (TileId t = 0; t < m.num_tiles; ++t) next[(t + 1) % m.num_tiles] = values[t] + t;
    values = next;
  }
  std::int32_t mismatches = 0;
  for (TileId t = 0; t < m.num_tiles; ++t) {
    std::int64_t value = 0;
    engine().read(ring.in[t], 0, &value, 8);
    if (value != values[t]) ++mismatches;
  }
  CHECK(mismatches == 0);
  // Compute: slowest vertex 6 x (22 + 1) + 5 = 143 when (7t + s) % 13 == 12 for some t; exchange 8 bytes = 2.
  CHECK(stats.phases.size() == 3u * steps);
  CHECK(stats.total_cycles == steps * ((3 + 143) + 10 + (5 + 2)));
  CHECK(stats.phases[0].active_tiles == 1472);
  CHECK(stats.phases[2].bytes == 8 * 1472);
}

TEST_CASE("engine: SRAM overflow throws PlanError naming program, tile, bytes and capacity", "[sim][engine][unit]") {
  MachineConfig m = tiny_machine();
  m.num_tiles = 32;
  Program p;
  p.name = "big";
  p.add_buffer("x", 17, 700);
  p.add_buffer("y", 17, 400);  // at 704 after alignment: 1104 bytes
  p.add_buffer("z", 20, 2000);
  p.steps.push_back({});
  try {
    engine().load(p, m, Mode::timing_only);
    FAIL("no PlanError");
  } catch (const tilesim::PlanError& e) {
    CHECK(e.code() == tilesim::ExitCode::does_not_fit);
    CHECK_THAT(e.what(),
               Catch::StartsWith("program big: tile 17 needs 1104 bytes of SRAM but has 1024 (machine tiny)"));
    CHECK_THAT(e.what(), Catch::Contains("tile 20"));
  }
  // Alignment padding counts: 3 bytes then 13 need 8 + 13 = 21 bytes, more than 16.
  m.sram_bytes_per_tile = 16;
  Program padded;
  padded.name = "padded";
  padded.add_buffer("small", 3, 3);
  padded.add_buffer("next", 3, 13);
  CHECK(padded.bytes_per_tile(m.num_tiles)[3] == 21);
  CHECK_THROWS_WITH(engine().load(padded, m, Mode::functional), Catch::Contains("tile 3 needs 21 bytes"));
  // A failed load leaves nothing loaded.
  CHECK_THROWS_AS(engine().run(), std::logic_error);
}

TEST_CASE("engine: repeated programs on one engine give the same cycles each time", "[sim][engine][unit]") {
  auto tiny = tiny_program();
  MachineConfig full = tiny_machine();
  full.num_tiles = 1472;
  auto ring = ring_program(full.num_tiles, 2);
  MachineConfig m4 = tiny_machine();
  m4.tiles_per_supertile = 4;

  engine().load(tiny.program, tiny_machine(), Mode::functional);
  const RunStats first = engine().run();
  engine().load(ring.program, full, Mode::functional);
  const RunStats ring_stats = engine().run();
  engine().load(broadcast_program({4, 5, 6}, {0, 1, 2}, 24), m4, Mode::timing_only);
  const RunStats broadcast_stats = engine().run();
  engine().load(broadcast_program({0, 1}, {2, 3}, 16), tiny_machine(), Mode::functional);
  engine().run();
  engine().load(tiny.program, tiny_machine(), Mode::functional);
  const RunStats again = engine().run();

  check_tiny_cycles(again);
  CHECK(again.total_cycles == first.total_cycles);
  CHECK(ring_stats.total_cycles != first.total_cycles);
  CHECK(broadcast_stats.total_cycles == 10 + 5 + 6);
  CHECK(read_all<std::int32_t>(tiny.result, 1) == std::vector<std::int32_t>{36});
  // Running the loaded program again without reloading also repeats.
  CHECK(engine().run().total_cycles == 598);
}

TEST_CASE("engine: a program of empty supersteps costs one sync each, but none after the last", "[sim][engine][unit]") {
  // A sync separates compute from the exchange after it: the last superstep, with nothing to
  // exchange, has none.
  Program p;
  p.name = "empty";
  p.steps.resize(3);
  engine().load(p, tiny_machine(), Mode::functional);
  const RunStats stats = engine().run();
  CHECK(stats.total_cycles == 20);
  CHECK(stats.phases.size() == 2);
  CHECK(stats.peak_tile == -1);
  Program none;
  none.name = "none";
  engine().load(none, tiny_machine(), Mode::functional);
  CHECK(engine().run().total_cycles == 0);
}

TEST_CASE("engine: load rejects references to tiles, buffers and bytes that do not exist", "[sim][engine][unit]") {
  const MachineConfig m = tiny_machine();
  SECTION("a vertex reading another tile's buffer") {
    auto t = tiny_program();
    t.program.steps[0].compute.vertices[0].vertex.buffers.push_back({t.b, 0});
    CHECK_THROWS_WITH(engine().load(t.program, m, Mode::functional),
                      Catch::Contains("buffer b") && Catch::Contains("is on tile 1"));
  }
  SECTION("a vertex on a tile the machine lacks") {
    auto t = tiny_program();
    t.program.steps[0].compute.vertices[0].tile = 8;
    CHECK_THROWS_WITH(engine().load(t.program, m, Mode::timing_only), Catch::Contains("tile 8 of a 8-tile machine"));
  }
  SECTION("a vertex with a worker cycle list of the wrong size") {
    auto t = tiny_program();
    t.program.steps[0].compute.vertices[0].vertex.worker_cycles = {1, 2};
    CHECK_THROWS_WITH(engine().load(t.program, m, Mode::timing_only),
                      Catch::Contains("compute set fill") && Catch::Contains("tile 0"));
  }
  SECTION("a transfer reading past its source") {
    auto t = tiny_program();
    t.program.steps[0].exchange.transfers[1].src.offset_bytes = 8;
    CHECK_THROWS_WITH(engine().load(t.program, m, Mode::functional),
                      Catch::Contains("transfer 1: source") && Catch::Contains("[8, 24)"));
  }
  SECTION("a transfer writing past a destination") {
    auto t = tiny_program();
    t.program.steps[0].exchange.transfers[1].dst[0] = {t.result, 0};
    CHECK_THROWS_WITH(engine().load(t.program, m, Mode::functional), Catch::Contains("destination 0"));
  }
  SECTION("a transfer to a buffer that does not exist") {
    auto t = tiny_program();
    t.program.steps[0].exchange.transfers[0].dst[1] = {99, 0};
    CHECK_THROWS_WITH(engine().load(t.program, m, Mode::functional), Catch::Contains("buffer id 99"));
  }
  SECTION("a buffer on a tile the machine lacks") {
    Program p;
    p.add_buffer("x", 9, 8);
    CHECK_THROWS_AS(engine().load(p, m, Mode::functional), std::logic_error);
  }
  SECTION("more tiles than the engine was elaborated with") {
    MachineConfig big = m;
    big.num_tiles = engine().tile_slots() + 1;
    CHECK_THROWS_WITH(engine().load(Program{}, big, Mode::functional), Catch::Contains("tile slots"));
  }
  SECTION("a machine that cannot be simulated") {
    MachineConfig bad = m;
    bad.exchange_bytes_per_cycle = 0;
    CHECK_THROWS_AS(engine().load(Program{}, bad, Mode::functional), std::logic_error);
  }
}

TEST_CASE("engine: host access is bounds-checked", "[sim][engine][unit]") {
  auto t = tiny_program();
  engine().load(t.program, tiny_machine(), Mode::functional);
  std::int32_t values[9] = {};
  CHECK_THROWS_AS(engine().write(t.a, 0, values, 33), std::logic_error);
  CHECK_THROWS_AS(engine().read(t.a, 30, values, 4), std::logic_error);
  CHECK_THROWS_AS(engine().read(t.a, -1, values, 1), std::logic_error);
  CHECK_THROWS_AS(engine().read(42, 0, values, 1), std::logic_error);
  CHECK_NOTHROW(engine().read(t.a, 28, values, 4));
}

TEST_CASE("engine: an exception from a vertex body stops the run and leaves the engine usable", "[sim][engine][unit]") {
  auto t = tiny_program();
  t.program.steps[1].compute.vertices[0].vertex.execute = [](const VertexContext&) {
    throw std::runtime_error("vertex failed on purpose");
  };
  engine().load(t.program, tiny_machine(), Mode::functional);
  CHECK_THROWS_WITH(engine().run(), "vertex failed on purpose");
  auto good = tiny_program();
  engine().load(good.program, tiny_machine(), Mode::functional);
  check_tiny_cycles(engine().run());
}

TEST_CASE("engine: instance cannot grow after elaboration", "[sim][engine][unit]") {
  CHECK(engine().tile_slots() >= engine_tile_slots);
  CHECK(&Engine::instance(8) == &engine());
  CHECK_THROWS_AS(Engine::instance(engine().tile_slots() + 1), std::logic_error);
}

// Same-instant events in another order: every phase's tiles started, and their byte work run, in an
// order drawn from a seed. The tiny program's bytes and cycles (every phase's) must not change; a
// phase whose vertices record the order they ran in shows the shuffle reaches the work at all.
TEST_CASE("engine: a seeded shuffle of each phase's tile order changes no byte and no cycle", "[sim][engine][unit]") {
  struct RestoreOrder {
    ~RestoreOrder() { Engine::shuffle_same_instant_order(std::nullopt); }
  } restore;
  auto t = tiny_program();
  engine().load(t.program, tiny_machine(), Mode::functional);
  const RunStats in_order = engine().run();
  const std::vector<BufferId> buffers = {t.a, t.c, t.d, t.e, t.result, t.f, t.g};
  std::vector<std::vector<std::int32_t>> bytes;
  for (const BufferId b : buffers) bytes.push_back(read_all<std::int32_t>(b, b == t.result ? 1 : b == t.e ? 4 : 8));
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    INFO("seed " << seed);
    Engine::shuffle_same_instant_order(seed);
    auto u = tiny_program();
    engine().load(u.program, tiny_machine(), Mode::functional);
    const RunStats shuffled = engine().run();
    CHECK(shuffled.total_cycles == in_order.total_cycles);
    REQUIRE(shuffled.phases.size() == in_order.phases.size());
    for (std::size_t p = 0; p < shuffled.phases.size(); ++p) CHECK(shuffled.phases[p].cycles == in_order.phases[p].cycles);
    for (std::size_t k = 0; k < buffers.size(); ++k)
      CHECK(read_all<std::int32_t>(buffers[k], bytes[k].size()) == bytes[k]);
  }

  // Eight tiles finishing at the same instant, each vertex noting its tile when it runs.
  std::vector<std::int32_t> ran;
  Program order_program;
  order_program.name = "order";
  Superstep step;
  step.name = "note";
  step.compute.name = "note";
  for (TileId tile = 0; tile < 8; ++tile) {
    const BufferId b = order_program.add_buffer("b" + std::to_string(tile), tile, 4);
    step.compute.vertices.push_back(
        {tile, vertex("Note", {10, 10, 10, 10, 10, 10}, 0, {{b, 0}}, [&ran, tile](const VertexContext&) { ran.push_back(tile); })});
  }
  order_program.steps.push_back(step);
  Engine::shuffle_same_instant_order(std::nullopt);
  engine().load(order_program, tiny_machine(), Mode::functional);
  const Cycles note_cycles = engine().run().total_cycles;
  CHECK(ran == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7});
  bool reordered = false;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    ran.clear();
    Engine::shuffle_same_instant_order(seed);
    engine().load(order_program, tiny_machine(), Mode::functional);
    CHECK(engine().run().total_cycles == note_cycles);
    REQUIRE(ran.size() == 8);
    reordered = reordered || ran != std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7};
  }
  CHECK(reordered);
}
