// What the engine reports: the Chrome/Perfetto trace, the stats JSON, and a clean stdout (no SystemC
// banner, which would corrupt `tilesim --json`).
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "common/error.hpp"
#include "sim/engine.hpp"
#include "tests/support/sim_test_machine.hpp"

using namespace tilesim::sim;

namespace {

// One elaboration per process, shared by every test, with the tiles the trace machine has (a larger engine
// elaborated earlier in a one-process run serves as well). The trace names the sync controller after the
// engine's last tile slot.
Engine& trace_engine() { return Engine::instance(4); }

// 4 tiles at 2 GHz (1 cycle = 0.0005 us), compute fixed 3, sync 10, exchange fixed 5, 4 bytes/cycle.
MachineConfig trace_machine() {
  return tilesim_test::sim_test_machine("trace", 4, 256, 3, 2e9);
}

Vertex vertex(std::string codelet, std::vector<Cycles> worker_cycles) {
  Vertex v;
  v.codelet = std::move(codelet);
  v.worker_cycles = std::move(worker_cycles);
  return v;
}

// s0: compute  tile 0 A (6 x 2 = 12), tile 1 B (6 x 4 = 24), tile 2 Idle (0: not busy)  [0, 27), tiles from 3
//     sync     [27, 37)
//     exchange tile 0 sends 8 bytes to tiles 1 and 3 (2 cycles each)                    [37, 44), tiles from 42
// s1: compute  tile 3 X and Y (single-worker, one context each: 6 x 1)                   [44, 53), tiles from 47
//     sync     [53, 63)
Program trace_program() {
  Program p;
  p.name = "traced";
  const BufferId a = p.add_buffer("a", 0, 8);
  const BufferId b = p.add_buffer("b", 1, 8);
  const BufferId d = p.add_buffer("d", 3, 8);
  Superstep s0;
  s0.name = "s0";
  s0.compute.vertices.push_back({0, vertex("A", {2, 2, 2, 2, 2, 2})});
  s0.compute.vertices.push_back({1, vertex("B", {4})});
  s0.compute.vertices.push_back({2, vertex("Idle", {0})});
  s0.exchange.name = "spread";
  s0.exchange.transfers.push_back({{a, 0}, 8, {{b, 0}, {d, 0}}});
  p.steps.push_back(s0);
  Superstep s1;
  s1.name = "s1";
  s1.compute.vertices.push_back({3, vertex("X", {1})});
  s1.compute.vertices.push_back({3, vertex("Y", {1})});
  p.steps.push_back(s1);
  return p;
}

std::filesystem::path temp_file(const std::string& stem) {
  return std::filesystem::temp_directory_path() / (stem + "_" + std::to_string(::getpid()) + ".json");
}

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("trace: Chrome trace JSON with one slice per busy tile per phase plus sync slices", "[sim][trace][unit]") {
  trace_engine().load(trace_program(), trace_machine(), Mode::timing_only);
  TraceWriter trace;
  const RunStats stats = trace_engine().run(&trace);
  REQUIRE(stats.total_cycles == 53);
  CHECK(trace.size() == 7);  // compute 2 + sync 1 + exchange 3 + compute 1 (no sync after the last compute)
  CHECK(trace.end_us() == Approx(53 * 0.0005));

  const auto path = temp_file("tilesim_sim_trace");
  trace.write(path.string());
  const nlohmann::json j = read_json(path);
  std::filesystem::remove(path);

  CHECK(j.at("displayTimeUnit") == "ns");
  std::map<std::int64_t, std::string> track_names;
  std::vector<nlohmann::json> slices;
  for (const auto& event : j.at("traceEvents")) {
    CHECK(event.at("pid") == 0);
    if (event.at("ph") == "M") {
      CHECK(event.at("name") == "thread_name");
      track_names[event.at("tid").get<std::int64_t>()] = event.at("args").at("name").get<std::string>();
    } else {
      CHECK(event.at("ph") == "X");
      slices.push_back(event);
    }
  }
  CHECK(track_names ==
        std::map<std::int64_t, std::string>{{0, "tile 0"}, {1, "tile 1"}, {3, "tile 3"}, {trace_engine().tile_slots(), "sync"}});
  REQUIRE(slices.size() == 7);

  auto find = [&](std::int64_t tid, const std::string& cat, double ts_us) -> const nlohmann::json* {
    for (const auto& s : slices) {
      if (s.at("tid") == tid && s.at("cat") == cat && s.at("ts").get<double>() == Approx(ts_us)) return &s;
    }
    return nullptr;
  };
  const auto* a = find(0, "compute", 3 * 0.0005);
  REQUIRE(a);
  CHECK(a->at("name") == "A");
  CHECK(a->at("dur").get<double>() == Approx(12 * 0.0005));
  const auto* b = find(1, "compute", 3 * 0.0005);
  REQUIRE(b);
  CHECK(b->at("dur").get<double>() == Approx(24 * 0.0005));
  CHECK(find(2, "compute", 3 * 0.0005) == nullptr);  // tile 2 was idle
  const auto* sync0 = find(trace_engine().tile_slots(), "sync", 27 * 0.0005);
  REQUIRE(sync0);
  CHECK(sync0->at("name") == "s0");
  CHECK(sync0->at("dur").get<double>() == Approx(10 * 0.0005));
  for (std::int64_t tile : {0, 1, 3}) {
    const auto* x = find(tile, "exchange", 42 * 0.0005);
    REQUIRE(x);
    CHECK(x->at("name") == "spread");
    CHECK(x->at("dur").get<double>() == Approx(2 * 0.0005));
  }
  const auto* xy = find(3, "compute", 47 * 0.0005);
  REQUIRE(xy);
  CHECK(xy->at("name") == "X + Y");
  CHECK(find(trace_engine().tile_slots(), "sync", 53 * 0.0005) == nullptr);  // nothing is exchanged after it
}

TEST_CASE("trace: a later program's slices follow the earlier program's", "[sim][trace][unit]") {
  TraceWriter trace;
  trace_engine().load(trace_program(), trace_machine(), Mode::timing_only);
  trace_engine().run(&trace);
  const double first_end_us = trace.end_us();
  const std::size_t first_slices = trace.size();
  trace_engine().load(trace_program(), trace_machine(), Mode::functional);
  trace_engine().run(&trace);
  CHECK(trace.size() == 2 * first_slices);
  CHECK(trace.end_us() == Approx(2 * first_end_us));

  const auto path = temp_file("tilesim_sim_trace_twice");
  trace.write(path.string());
  const nlohmann::json j = read_json(path);
  std::filesystem::remove(path);
  std::size_t slices = 0, later = 0;
  for (const auto& event : j.at("traceEvents")) {
    if (event.at("ph") != "X") continue;
    ++slices;
    if (event.at("ts").get<double>() >= first_end_us) ++later;
  }
  CHECK(slices == 2 * first_slices);
  CHECK(later == first_slices);
}

TEST_CASE("trace: names are escaped and an unwritable path is a bad-input error", "[sim][trace][unit]") {
  TraceWriter trace;
  trace.name_track(0, "tile \"0\"\\\n");
  trace.add_slice(0, "odd\tname", "compute", 1.5, 2.25);
  const auto path = temp_file("tilesim_sim_trace_escape");
  trace.write(path.string());
  const nlohmann::json j = read_json(path);
  std::filesystem::remove(path);
  CHECK(j.at("traceEvents").at(0).at("args").at("name") == "tile \"0\"\\\n");
  CHECK(j.at("traceEvents").at(1).at("name") == "odd\tname");
  CHECK(j.at("traceEvents").at(1).at("ts") == 1.5);

  const std::string bad = "/nonexistent-tilesim-dir/trace.json";
  try {
    trace.write(bad);
    FAIL("no error");
  } catch (const tilesim::Error& e) {
    CHECK(e.code() == tilesim::ExitCode::bad_input);
    CHECK_THAT(e.what(), Catch::Contains(bad));
  }
}

TEST_CASE("stats: to_json carries every figure under unit-named keys", "[sim][stats][unit]") {
  CHECK(to_string(PhaseKind::compute) == "compute");
  CHECK(to_string(PhaseKind::sync) == "sync");
  CHECK(to_string(PhaseKind::exchange) == "exchange");

  trace_engine().load(trace_program(), trace_machine(), Mode::functional);
  const RunStats stats = trace_engine().run();
  const nlohmann::json j = stats.to_json();
  CHECK(j.at("program") == "traced");
  CHECK(j.at("total_cycles") == 53);
  CHECK(j.at("compute_cycles") == 27 + 9);
  CHECK(j.at("sync_cycles") == 10);
  CHECK(j.at("exchange_cycles") == 7);
  CHECK(j.at("exchange_bytes_sent") == 8);
  CHECK(j.at("exchange_bytes_received") == 16);
  CHECK(j.at("peak_tile_bytes") == 8);
  CHECK(j.at("peak_tile") == 0);
  CHECK(j.at("vertices") == 5);
  CHECK(j.at("supersteps") == 2);
  CHECK(j.at("wall_s").get<double>() >= 0);
  CHECK(j.at("simulated_cycles_per_s").get<double>() >= 0);
  REQUIRE(j.at("phases").size() == 4);
  const auto& exchange = j.at("phases").at(2);
  CHECK(exchange.at("name") == "s0");
  CHECK(exchange.at("kind") == "exchange");
  CHECK(exchange.at("start_cycle") == 37);
  CHECK(exchange.at("cycles") == 7);
  CHECK(exchange.at("slowest_tile") == 0);
  CHECK(exchange.at("active_tiles") == 3);
  CHECK(exchange.at("bytes") == 16);
}

// Run by the next test in a child process: elaborates the engine and runs a program.
TEST_CASE("stdout child: elaborate and run", "[.sim_stdout_child]") {
  trace_engine().load(trace_program(), trace_machine(), Mode::functional);
  CHECK(trace_engine().run().total_cycles == 53);
}

TEST_CASE("engine: SystemC prints nothing on stdout (no copyright banner)", "[sim][engine][unit]") {
  // A fresh process, since this one may have elaborated the engine already; Catch's own report goes
  // to /dev/null, so the child's stdout holds only what SystemC and the engine print: no banner, and
  // no SystemC report (reports go to stdout by default).
  std::array<char, 4096> self{};
  const auto length = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  REQUIRE(length > 0);
  const std::string command = "'" + std::string(self.data(), static_cast<std::size_t>(length)) +
                              "' '[.sim_stdout_child]' --out /dev/null 2>/dev/null";
  FILE* child = ::popen(command.c_str(), "r");
  REQUIRE(child);
  std::string output;
  std::array<char, 256> chunk{};
  while (std::fgets(chunk.data(), static_cast<int>(chunk.size()), child)) output += chunk.data();
  const int status = ::pclose(child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(output.empty());
}
