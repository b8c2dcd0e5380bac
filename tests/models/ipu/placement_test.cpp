// Graph-aware placement on the IPU (models/ipu/placement): the exchange plan of one message-passing
// step on a hand-computable graph, its simulation, the rounds and the does-not-fit error, what METIS
// buys on a clustered graph, and the `tilesim placement` command.
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/placement.hpp"
#include "workloads/graphs/algorithms.hpp"
#include "workloads/graphs/graph_random.hpp"

using namespace tilesim;
using namespace tilesim::ipu;
using Catch::Matchers::Contains;

namespace {

// Bow with only `tiles` tiles, so tiny graphs are hand-countable.
IpuMachine small_bow(std::int32_t tiles) {
  IpuMachine m = load_ipu_machine("bow");
  m.chip.num_tiles = tiles;
  return m;
}

std::string run_placement_cli(const std::string& args, int& status) {
  const std::string command = std::string(TILESIM_BINARY) + " placement " + args + " 2>/dev/null";
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int raw = ::pclose(pipe);
  status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

}  // namespace

TEST_CASE("Placements map rows to tiles linearly, after a relabelling, or by parts", "[placement][unit]") {
  CHECK(linear_row_tiles(7, 3) == TileOfRow{0, 0, 0, 1, 1, 1, 2});
  CHECK(linear_row_tiles(2, 4) == TileOfRow{0, 1});
  // Row r goes where its label would go linearly.
  CHECK(relabelled_row_tiles({5, 4, 3, 2, 1, 0}, 3) == TileOfRow{2, 2, 1, 1, 0, 0});
  CHECK(part_row_tiles({0, 1, 1, 0}, 2, 4) == TileOfRow{0, 2, 2, 0});
}

TEST_CASE("The message exchange counts one transfer per distinct (row, destination tile) off the row's tile", "[placement][unit]") {
  const IpuMachine machine = small_bow(4);
  // 8 rows, 2 per tile: tile 0 {0, 1}, tile 1 {2, 3}, tile 2 {4, 5}, tile 3 {6, 7}.
  const std::vector<std::int32_t> src = {0, 0, 1, 4, 5, 2};
  const std::vector<std::int32_t> dst = {2, 3, 3, 0, 5, 3};
  const TileOfRow tiles = linear_row_tiles(8, 4);
  constexpr std::int64_t row_bytes = 16;
  const MessageExchangePlan p = plan_message_exchange(src, dst, tiles, row_bytes, machine);
  CHECK(p.cut_edges == 4);                  // 0->2, 0->3, 1->3, 4->0
  CHECK(p.cut_fraction() == Approx(4.0 / 6.0));
  CHECK(p.row_transfers == 3);              // (0, tile 1) once for two edges, (1, tile 1), (4, tile 0)
  CHECK(p.exchange_bytes == 3 * row_bytes);
  CHECK(p.busiest_receiver == 1);
  CHECK(p.max_bytes_received_per_tile == 2 * row_bytes);
  CHECK(p.max_bytes_sent_per_tile == 2 * row_bytes);  // tile 0 sends rows 0 and 1
  CHECK(p.max_rows_per_tile == 2);
  CHECK(p.max_edges_per_tile == 4);        // tile 1 computes the messages into rows 2 and 3
  CHECK(p.rounds == 1);

  const PlacementResult r = simulate_placement("linear", src, dst, tiles, row_bytes, machine);
  CHECK(r.stats.exchange_bytes_received == p.exchange_bytes);
  CHECK(r.stats.exchange_bytes_sent == p.exchange_bytes);  // no row goes to two tiles here
  // The busiest tile receives 32 bytes at the tile's exchange rate at best.
  CHECK(static_cast<double>(r.stats.exchange_cycles) >= 2.0 * row_bytes / machine.chip.exchange_bytes_per_cycle);
  CHECK(r.time_s == Approx(machine.chip.seconds(r.stats.total_cycles)));
  CHECK(r.to_json()["kind"] == "simulated");
}

TEST_CASE("A row sent to several tiles is multicast: sent once, received by each", "[placement][unit]") {
  const IpuMachine machine = small_bow(4);
  const std::vector<std::int32_t> src = {0, 0, 0};
  const std::vector<std::int32_t> dst = {2, 4, 6};  // tiles 1, 2, 3
  const PlacementResult r = simulate_placement("linear", src, dst, linear_row_tiles(8, 4), 64, machine);
  CHECK(r.plan.row_transfers == 3);
  CHECK(r.stats.exchange_bytes_received == 3 * 64);
  CHECK(r.stats.exchange_bytes_sent == 64);
}

TEST_CASE("Received rows that overflow a tile are exchanged in column rounds, own rows that overflow are exit 3", "[placement][unit]") {
  IpuMachine machine = small_bow(2);
  // Tile 0 owns row 0 and receives rows 2..9 from tile 1 (5 rows per tile).
  std::vector<std::int32_t> src, dst;
  for (int r = 5; r < 10; ++r) {
    src.push_back(r);
    dst.push_back(0);
  }
  const TileOfRow tiles = linear_row_tiles(10, 2);
  const std::int64_t row_bytes = 1024;
  // SRAM for the own rows and a quarter of the received ones.
  machine.planner.memory_fraction = 1.0;
  machine.chip.sram_bytes_per_tile = 5 * row_bytes + 5 * row_bytes / 4;
  const MessageExchangePlan p = plan_message_exchange(src, dst, tiles, row_bytes, machine);
  CHECK(p.rounds >= 4);
  CHECK(p.max_tile_bytes <= machine.chip.sram_bytes_per_tile);
  const PlacementResult r = simulate_placement("linear", src, dst, tiles, row_bytes, machine);
  CHECK(r.stats.exchange_bytes_received == 5 * row_bytes);  // the same bytes, in several supersteps
  CHECK(r.stats.supersteps == p.rounds);

  machine.chip.sram_bytes_per_tile = 4 * row_bytes;
  try {
    plan_message_exchange(src, dst, tiles, row_bytes, machine);
    FAIL("expected a PlanError");
  } catch (const PlanError& e) {
    CHECK(e.code() == ExitCode::does_not_fit);
    CHECK_THAT(std::string(e.what()), Contains("needs") && Contains(std::to_string(4 * row_bytes)) && Contains("more IPUs"));
  }
}

TEST_CASE("A METIS placement exchanges fewer bytes than a linear one on a clustered graph", "[placement][unit]") {
  using namespace tilesim::workloads::graphs;
  // 16 cliques of 12 nodes joined in a ring, ids shuffled; 16 tiles.
  constexpr int clusters = 16, size = 12;
  EdgeList g;
  g.num_nodes = clusters * size;
  for (int k = 0; k < clusters; ++k) {
    for (int i = 0; i < size; ++i) {
      for (int j = 0; j < size; ++j) {
        if (i == j) continue;
        g.src.push_back(k * size + i);
        g.dst.push_back(k * size + j);
      }
    }
    g.src.push_back(k * size);
    g.dst.push_back(((k + 1) % clusters) * size);
  }
  std::vector<std::int32_t> shuffle(static_cast<std::size_t>(g.num_nodes));
  std::iota(shuffle.begin(), shuffle.end(), 0);
  auto engine = graph_engine(3, 0);
  for (std::size_t i = shuffle.size() - 1; i > 0; --i) std::swap(shuffle[i], shuffle[bounded(engine, i + 1)]);
  g = relabel(g, shuffle);

  const IpuMachine machine = small_bow(clusters);
  const auto linear = simulate_placement("linear", g.src, g.dst, linear_row_tiles(g.num_nodes, clusters), 256, machine);
  const auto parts = metis_partition(g, clusters, 1);
  const auto metis = simulate_placement("metis", g.src, g.dst, part_row_tiles(parts, clusters, clusters), 256, machine);
  CHECK(metis.plan.cut_edges == clusters);
  CHECK(metis.plan.exchange_bytes * 10 < linear.plan.exchange_bytes);
  CHECK(metis.stats.exchange_cycles < linear.stats.exchange_cycles);
}

TEST_CASE("tilesim placement prints the three placements for a preset and rejects bad input", "[placement][cli]") {
  int status = -1;
  const std::string out = run_placement_cli("--graph cora --features 64 --json", status);
  CHECK(status == 0);
  const auto report = nlohmann::json::parse(out);
  REQUIRE(report["placements"].size() == 3);
  CHECK(report["placements"][0]["placement"] == "linear");
  CHECK(report["placements"][1]["placement"] == "rcm");
  CHECK(report["placements"][2]["placement"] == "metis");
  CHECK(report["row_bytes"] == 256);
  CHECK(report["graph"]["num_nodes"] == 2708);
  CHECK(report["placements"][2]["cut_edges"].get<std::int64_t>() < report["placements"][0]["cut_edges"].get<std::int64_t>());

  run_placement_cli("--graph no-such-preset", status);
  CHECK(status == 2);
  run_placement_cli("", status);
  CHECK(status == 2);
}
