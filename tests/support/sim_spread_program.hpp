#pragma once
// A program that exercises every kind of traffic a rank boundary can cut, on a machine of four chips
// of four tiles: the engine spread over ranks is checked with it in process (tests/sim/rank_spread_test.cpp)
// and under mpirun (mpi/engine_driver.cpp, run by tests/apps/mpi_engine_test.cpp).
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/program.hpp"
#include "tests/support/sim_test_machine.hpp"

namespace tilesim_test {

// Four chips of four tiles (tiles 4c .. 4c+3 on chip c), each joined to each by its own link group.
inline tilesim::sim::MachineConfig four_chips() {
  tilesim::sim::MachineConfig m = sim_test_machine("four-chips", 16, 4096, 3);
  m.tiles_per_chip = 4;
  m.routes.resize(16);
  for (std::int32_t from = 0; from < 4; ++from) {
    for (std::int32_t to = 0; to < 4; ++to) {
      if (from == to) continue;
      m.routes[static_cast<std::size_t>(from * 4 + to)] = {static_cast<std::int32_t>(m.links.size())};
      m.links.push_back({from, to, 2.0});
    }
  }
  m.link_latency_cycles = 7;
  m.cross_chip_sync_cycles = 20;
  return m;
}

inline tilesim::sim::Vertex spread_vertex(std::vector<tilesim::sim::Cycles> worker_cycles, std::vector<tilesim::sim::BufferRef> buffers,
                                          tilesim::sim::VertexBody body) {
  tilesim::sim::Vertex v;
  v.codelet = "Body";
  v.worker_cycles = std::move(worker_cycles);
  v.buffers = std::move(buffers);
  v.execute = std::move(body);
  return v;
}

// The host writes `input` (4 int32 per tile); the program then makes: a ring that crosses chips, a
// broadcast to a tile of its own chip and to tiles of two chips further on, a strided column block,
// read-only copies shared on their source's rank and received on another, a copy of such a copy, and a
// gather of every tile's result onto tile 0 (where two transfers write one slot, the later source
// tile's write stays).
struct SpreadProgram {
  tilesim::sim::Program program;
  std::vector<tilesim::sim::BufferId> input, value, ring, result;
  tilesim::sim::BufferId table = -1, table_near = -1, table_far = -1, table_far_copy = -1;
  tilesim::sim::BufferId rows = -1, column = -1, broadcast_src = -1;
  std::vector<tilesim::sim::BufferId> broadcast_dst;
  tilesim::sim::BufferId gathered = -1;
};

inline SpreadProgram spread_program() {
  using namespace tilesim::sim;
  SpreadProgram s;
  Program& p = s.program;
  p.name = "spread";
  for (TileId t = 0; t < 16; ++t) {
    s.input.push_back(p.add_buffer("input", t, 16));
    s.value.push_back(p.add_buffer("value", t, 16));
    s.ring.push_back(p.add_buffer("ring", t, 16));
    s.result.push_back(p.add_buffer("result", t, 8));
  }
  s.table = p.add_buffer("table", 4, 32);
  s.table_near = p.add_buffer("table_near", 5, 32);  // the table's chip: shares its bytes
  s.table_far = p.add_buffer("table_far", 13, 32);   // another rank's chip (of 2 or 4): receives a copy
  s.table_far_copy = p.add_buffer("table_far_copy", 14, 32);
  s.rows = p.add_buffer("rows", 11, 6 * 12);  // 6 rows of 12 bytes
  s.column = p.add_buffer("column", 2, 6 * 4);
  s.broadcast_src = p.add_buffer("broadcast_src", 1, 24);
  for (TileId t : {0, 6, 9, 15}) s.broadcast_dst.push_back(p.add_buffer("broadcast_dst", t, 24));
  s.gathered = p.add_buffer("gathered", 0, 16 * 8);

  Superstep produce;
  produce.name = "produce";
  for (TileId t = 0; t < 16; ++t) {
    const Cycles c = 5 + (t * 5) % 11;
    produce.compute.vertices.push_back({t, spread_vertex({c}, {{s.input[t], 0}, {s.value[t], 0}}, [t](const VertexContext& ctx) {
                                          for (int i = 0; i < 4; ++i) ctx.as<std::int32_t>(1)[i] = 1000 * t + i + ctx.as<std::int32_t>(0)[i];
                                        })});
    produce.exchange.transfers.push_back({{s.value[t], 0}, 16, {{s.ring[(t + 3) % 16], 0}}});
  }
  produce.compute.vertices.push_back({4, spread_vertex({9, 9, 9, 9, 9, 9}, {{s.table, 0}}, [](const VertexContext& ctx) {
                                        for (int i = 0; i < 8; ++i) ctx.as<std::int32_t>(0)[i] = 7 * i + 1;
                                      })});
  produce.compute.vertices.push_back({11, spread_vertex({30}, {{s.rows, 0}}, [](const VertexContext& ctx) {
                                        for (int i = 0; i < 18; ++i) ctx.as<std::int32_t>(0)[i] = 500 + i;
                                      })});
  produce.compute.vertices.push_back({1, spread_vertex({3}, {{s.broadcast_src, 0}}, [](const VertexContext& ctx) {
                                        for (int i = 0; i < 24; ++i) ctx.data(0)[i] = std::byte(i * 3);
                                      })});
  Transfer shared{{s.table, 0}, 32, {{s.table_near, 0}, {s.table_far, 0}}};
  shared.read_only_copies = true;
  produce.exchange.transfers.push_back(shared);
  // The middle 4 bytes of each 12-byte row: 6 blocks, strided at the source, packed at the destination.
  produce.exchange.transfers.push_back({{s.rows, 4}, 4, {{s.column, 0}}, 6, 12, 4});
  Transfer broadcast{{s.broadcast_src, 0}, 24, {}};
  for (BufferId b : s.broadcast_dst) broadcast.dst.push_back({b, 0});
  produce.exchange.transfers.push_back(broadcast);
  p.steps.push_back(produce);

  Superstep combine;
  combine.name = "combine";
  for (TileId t = 0; t < 16; ++t) {
    combine.compute.vertices.push_back(
        {t, spread_vertex({4, 4, 4, 4, 4, 4 + t}, {{s.value[t], 0}, {s.ring[t], 0}, {s.result[t], 0}}, [](const VertexContext& ctx) {
           std::int64_t sum = 0;
           for (int i = 0; i < 4; ++i) sum += ctx.as<std::int32_t>(0)[i] * 3 + ctx.as<std::int32_t>(1)[i];
           *ctx.as<std::int64_t>(2) = sum;
         })});
  }
  combine.compute.vertices.push_back({13, spread_vertex({2}, {{s.table_far, 0}, {s.result[13], 0}}, [](const VertexContext& ctx) {
                                         *ctx.as<std::int64_t>(1) += ctx.as<std::int32_t>(0)[5];
                                       })});
  combine.compute.vertices.push_back({5, spread_vertex({2}, {{s.table_near, 0}, {s.result[5], 0}}, [](const VertexContext& ctx) {
                                        *ctx.as<std::int64_t>(1) += ctx.as<std::int32_t>(0)[6];
                                      })});
  for (TileId t = 0; t < 16; ++t) combine.exchange.transfers.push_back({{s.result[t], 0}, 8, {{s.gathered, 8 * t}}});
  // Tile 9 overwrites tile 3's slot, after tile 3 wrote it (a later source tile).
  combine.exchange.transfers.push_back({{s.result[9], 0}, 8, {{s.gathered, 8 * 3}}});
  Transfer onward{{s.table_far, 0}, 32, {{s.table_far_copy, 0}}};
  onward.read_only_copies = true;
  combine.exchange.transfers.push_back(onward);
  p.steps.push_back(combine);
  return s;
}

// What the host writes to the input buffers: tile t's 4 values, one row per tile.
inline std::vector<std::int32_t> spread_inputs() {
  std::vector<std::int32_t> v(16 * 4);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int32_t>(i * i % 97) - 40;
  return v;
}

// Tile 9's result when the program ran right: its values x 3 plus those tile 6 sent around the ring.
inline std::int64_t spread_tile9_result() {
  const auto in = spread_inputs();
  std::int64_t sum = 0;
  for (int i = 0; i < 4; ++i) sum += (9000 + i + in[static_cast<std::size_t>(9 * 4 + i)]) * 3 + (6000 + i + in[static_cast<std::size_t>(6 * 4 + i)]);
  return sum;
}

}  // namespace tilesim_test
