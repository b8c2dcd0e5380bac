// The engine spread over MPI ranks, without MPI: which rank holds which tiles (sim/rank_partition.hpp),
// and a multi-chip program compiled for each rank of a 2-rank and a 4-rank split, run here phase by
// phase with the messages handed from rank to rank in memory, against the same program compiled for
// one process: the same timing and, buffer by buffer, the same bytes. The MPI runs themselves are in
// tests/apps/mpi_engine_test.cpp.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/compiled_program.hpp"
#include "sim/rank_partition.hpp"
#include "tests/support/sim_spread_program.hpp"

using namespace tilesim::sim;
using tilesim_test::four_chips;
using tilesim_test::spread_program;
using tilesim_test::SpreadProgram;

namespace {

// One process's (or one rank's) compiled program with its own tiles' SRAM.
struct Process {
  std::vector<std::unique_ptr<std::byte[]>> arenas;
  CompiledProgram compiled;
};

Process compile_for(const Program& program, const MachineConfig& config, const RankPartition& partition) {
  Process p;
  BufferLayout layout = lay_out_buffers(program, config);
  std::vector<std::byte*> bases(static_cast<std::size_t>(config.num_tiles), nullptr);
  p.arenas.resize(bases.size());
  for (TileId t = 0; t < config.num_tiles; ++t) {
    const auto bytes = layout.tile_bytes[static_cast<std::size_t>(t)];
    if (bytes == 0 || !partition.owns(t)) continue;
    // Filled with a rank-specific pattern: a byte the program does not write must not be compared.
    p.arenas[static_cast<std::size_t>(t)].reset(new std::byte[static_cast<std::size_t>(bytes)]);
    std::memset(p.arenas[static_cast<std::size_t>(t)].get(), 0xA0 + partition.rank, static_cast<std::size_t>(bytes));
    bases[static_cast<std::size_t>(t)] = p.arenas[static_cast<std::size_t>(t)].get();
  }
  p.compiled = compile_program(program, config, Mode::functional, std::move(layout), bases, partition);
  return p;
}

// What WorkExecutor does with a phase, one step at a time, so that the ranks can take turns.
void run_vertices(const CompiledProgram& c, const CompiledPhase& phase) {
  for (const TileWork& work : phase.tiles) {
    for (std::uint32_t i = 0; i < work.count; ++i) {
      const VertexItem& item = c.vertices[work.first + i];
      if (item.execute) item.execute(VertexContext(c.addresses.data() + item.first_address, item.address_count));
    }
  }
}

std::vector<std::byte> pack_sends(const PhaseMessages& m) {
  std::vector<std::byte> out;
  for (const RankSend& send : m.sends) {
    for (std::int64_t k = 0; k < send.blocks; ++k) {
      const std::byte* from = send.src + k * send.src_stride_bytes;
      out.insert(out.end(), from, from + send.bytes);
    }
  }
  return out;
}

void run_copies(const CompiledProgram& c, const CompiledPhase& phase) {
  for (const TileWork& work : phase.tiles) {
    for (std::uint32_t i = 0; i < work.count; ++i) {
      const CopyItem& copy = c.copies[work.first + i];
      for (std::int64_t k = 0; k < copy.blocks; ++k) {
        std::memmove(copy.dst + k * copy.dst_stride_bytes, copy.src + k * copy.src_stride_bytes, static_cast<std::size_t>(copy.bytes));
      }
    }
  }
}

std::int64_t sum(const std::vector<std::int64_t>& v, std::size_t end) {
  std::int64_t total = 0;
  for (std::size_t i = 0; i < end; ++i) total += v[i];
  return total;
}

// Runs the ranks' programs in lockstep, each exchange's messages moved between them here.
void run_ranks(std::vector<Process>& ranks) {
  const auto K = ranks.size();
  const auto phases = ranks[0].compiled.phases.size();
  for (std::size_t i = 0; i < phases; ++i) {
    INFO("phase " << i);
    const CompiledPhase& phase = ranks[0].compiled.phases[i];
    if (phase.kind == PhaseKind::compute) {
      for (auto& r : ranks) run_vertices(r.compiled, r.compiled.phases[i]);
    } else if (phase.kind == PhaseKind::exchange && K == 1) {  // one process: no messages
      REQUIRE(phase.messages < 0);
      run_copies(ranks[0].compiled, phase);
    } else if (phase.kind == PhaseKind::exchange) {
      std::vector<std::vector<std::byte>> packed;
      for (auto& r : ranks) {
        REQUIRE(r.compiled.phases[i].messages >= 0);
        packed.push_back(pack_sends(r.compiled.messages[static_cast<std::size_t>(r.compiled.phases[i].messages)]));
      }
      for (std::size_t to = 0; to < K; ++to) {
        const CompiledProgram& receiver = ranks[to].compiled;
        const PhaseMessages& in = receiver.messages[static_cast<std::size_t>(receiver.phases[i].messages)];
        for (std::size_t from = 0; from < K; ++from) {
          const CompiledProgram& sender = ranks[from].compiled;
          const PhaseMessages& out = sender.messages[static_cast<std::size_t>(sender.phases[i].messages)];
          // What one side sends is what the other expects, computed by each from the same program.
          REQUIRE(out.send_bytes[to] == in.receive_bytes[from]);
          if (from == to) REQUIRE(out.send_bytes[to] == 0);
          if (in.receive_bytes[from] == 0) continue;
          std::memcpy(receiver.receive_buffer.get() + sum(in.receive_bytes, from), packed[from].data() + sum(out.send_bytes, to),
                      static_cast<std::size_t>(in.receive_bytes[from]));
        }
      }
      for (auto& r : ranks) run_copies(r.compiled, r.compiled.phases[i]);
    }
  }
}

std::vector<std::byte> buffer_bytes(const Process& p, BufferId b) {
  const auto& placement = p.compiled.layout.buffers[static_cast<std::size_t>(b)];
  const std::byte* at = p.compiled.buffer_addresses[static_cast<std::size_t>(b)];
  REQUIRE(at != nullptr);
  return std::vector<std::byte>(at, at + placement.bytes);
}

void check_spread_matches_one_process(std::int32_t K) {
  const SpreadProgram s = spread_program();
  const MachineConfig config = four_chips();
  std::vector<Process> one;
  one.push_back(compile_for(s.program, config, partition_over_ranks(config, 1, 0)));
  REQUIRE_FALSE(one[0].compiled.partition.distributed());
  REQUIRE(one[0].compiled.messages.empty());
  std::vector<Process> ranks;
  for (std::int32_t r = 0; r < K; ++r) ranks.push_back(compile_for(s.program, config, partition_over_ranks(config, K, r)));

  // Timing is the whole program's on every rank.
  for (const Process& r : ranks) {
    REQUIRE(r.compiled.partition.distributed());
    REQUIRE(r.compiled.phases.size() == one[0].compiled.phases.size());
    for (std::size_t i = 0; i < r.compiled.phases.size(); ++i) {
      const CompiledPhase& a = r.compiled.phases[i];
      const CompiledPhase& b = one[0].compiled.phases[i];
      CHECK(a.kind == b.kind);
      CHECK(a.fixed_cycles == b.fixed_cycles);
      CHECK(a.slowest_cycles == b.slowest_cycles);
      CHECK(a.slowest_tile == b.slowest_tile);
      CHECK(a.bytes == b.bytes);
      REQUIRE(a.tiles.size() == b.tiles.size());
      for (std::size_t k = 0; k < a.tiles.size(); ++k) CHECK(a.tiles[k].cycles == b.tiles[k].cycles);
    }
  }

  // The host's inputs, each written by the process that holds its tile (Engine::write_rows does that).
  const auto inputs = tilesim_test::spread_inputs();
  for (std::vector<Process>* processes : {&one, &ranks}) {
    for (Process& p : *processes) {
      for (TileId t = 0; t < 16; ++t) {
        std::byte* at = p.compiled.buffer_addresses[static_cast<std::size_t>(s.input[static_cast<std::size_t>(t)])];
        if (p.compiled.partition.owns(t)) std::memcpy(at, inputs.data() + 4 * t, 16);
        else CHECK(at == nullptr);
      }
    }
  }
  run_ranks(one);
  run_ranks(ranks);
  // Every buffer's bytes on the rank that holds it equal the one process's.
  std::int64_t compared = 0;
  for (BufferId b = 0; b < static_cast<BufferId>(s.program.buffers.size()); ++b) {
    const TileId tile = one[0].compiled.layout.buffers[static_cast<std::size_t>(b)].tile;
    const Process& holder = ranks[static_cast<std::size_t>(ranks[0].compiled.partition.owner(tile))];
    INFO("buffer " << s.program.name_of(b) << " on tile " << tile);
    CHECK(buffer_bytes(holder, b) == buffer_bytes(one[0], b));
    // Another rank holds no bytes of it.
    for (const Process& r : ranks) {
      if (&r != &holder) CHECK(r.compiled.buffer_addresses[static_cast<std::size_t>(b)] == nullptr);
    }
    ++compared;
  }
  CHECK(compared == static_cast<std::int64_t>(s.program.buffers.size()));

  // The values themselves, so that a run that moved nothing anywhere cannot pass.
  std::int64_t tile3_slot = 0, tile9_result = 0;
  const auto gathered = buffer_bytes(one[0], s.gathered);
  std::memcpy(&tile3_slot, gathered.data() + 8 * 3, 8);
  const auto r9 = buffer_bytes(one[0], s.result[9]);
  std::memcpy(&tile9_result, r9.data(), 8);
  CHECK(tile3_slot == tile9_result);
  CHECK(tile9_result == tilesim_test::spread_tile9_result());
  const auto column = buffer_bytes(ranks[0], s.column);  // tile 2, rank 0, from tile 11 (rank 1 or 2)
  std::int32_t first = 0, last = 0;
  std::memcpy(&first, column.data(), 4);
  std::memcpy(&last, column.data() + 20, 4);
  CHECK(first == 501);
  CHECK(last == 500 + 5 * 3 + 1);
}

}  // namespace

TEST_CASE("rank partition: whole chips to each rank when the ranks divide the chips, else every tile everywhere",
          "[sim][mpi][unit]") {
  MachineConfig m = four_chips();  // 4 chips of 4 tiles
  const RankPartition two = partition_over_ranks(m, 2, 1);
  CHECK(two.distributed());
  CHECK(two.tiles_per_rank == 8);
  CHECK(two.owner(7) == 0);
  CHECK(two.owner(8) == 1);
  CHECK(two.owner(15) == 1);
  CHECK(two.owns(8));
  CHECK_FALSE(two.owns(0));
  CHECK(describe(two, m) == "chips 2-3 of 4 (tiles 8-15) on rank 1 of 2");
  const RankPartition four = partition_over_ranks(m, 4, 2);
  CHECK(four.tiles_per_rank == 4);
  CHECK(four.owner(11) == 2);
  CHECK(four.owner(12) == 3);
  // Three ranks do not divide four chips, eight are more than four: every rank holds every tile.
  for (std::int32_t ranks : {3, 8}) {
    const RankPartition whole = partition_over_ranks(m, ranks, 1);
    CHECK_FALSE(whole.distributed());
    CHECK(whole.owns(0));
    CHECK(whole.owns(15));
    CHECK(describe(whole, m) == "every tile on each of " + std::to_string(ranks) + " ranks");
  }
  CHECK_FALSE(partition_over_ranks(m, 1, 0).distributed());
  m.tiles_per_chip = 0;  // one chip
  CHECK_FALSE(partition_over_ranks(m, 2, 0).distributed());
  CHECK_THROWS_AS(partition_over_ranks(m, 2, 2), std::logic_error);
  CHECK_THROWS_AS(partition_over_ranks(m, 0, 0), std::logic_error);
}

TEST_CASE("rank spread: a program compiled for each of 2 ranks, messages handed over, gives one process's bytes and timing",
          "[sim][mpi][unit]") {
  check_spread_matches_one_process(2);
}

TEST_CASE("rank spread: the same over 4 ranks, one chip each", "[sim][mpi][unit]") { check_spread_matches_one_process(4); }

TEST_CASE("rank spread: a broadcast to several tiles of another rank is sent to it once", "[sim][mpi][unit]") {
  const MachineConfig config = four_chips();
  Program p;
  p.name = "fan_out";
  const BufferId src = p.add_buffer("src", 0, 40);
  Superstep step;
  step.name = "fan_out";
  Transfer t{{src, 0}, 40, {}};
  for (TileId tile : {1, 8, 9, 10, 12}) t.dst.push_back({p.add_buffer("dst", tile, 40), 0});
  step.exchange.transfers.push_back(t);
  p.steps.push_back(step);
  const Process rank0 = compile_for(p, config, partition_over_ranks(config, 2, 0));
  const Process rank1 = compile_for(p, config, partition_over_ranks(config, 2, 1));
  const PhaseMessages& out = rank0.compiled.messages.at(0);
  const PhaseMessages& in = rank1.compiled.messages.at(0);
  CHECK(out.send_bytes == std::vector<std::int64_t>{0, 40});
  CHECK(out.receive_bytes == std::vector<std::int64_t>{0, 0});
  CHECK(in.receive_bytes == std::vector<std::int64_t>{40, 0});
  CHECK(in.send_bytes == std::vector<std::int64_t>{0, 0});
  CHECK(rank0.compiled.copies.size() == 1);  // tile 1
  CHECK(rank1.compiled.copies.size() == 4);  // tiles 8, 9, 10, 12, all from the one message
  for (const CopyItem& c : rank1.compiled.copies) CHECK(c.src == rank1.compiled.receive_buffer.get());
}

TEST_CASE("rank spread: a cross-rank transfer reading what its own exchange writes is refused", "[sim][mpi][unit]") {
  const MachineConfig config = four_chips();
  Program p;
  p.name = "read_after_write";
  const BufferId a = p.add_buffer("a", 0, 16);
  const BufferId b = p.add_buffer("b", 1, 16);
  const BufferId far = p.add_buffer("far", 12, 16);
  Superstep step;
  step.name = "chain";
  step.exchange.name = "chain";
  step.exchange.transfers.push_back({{a, 0}, 8, {{b, 4}}});     // writes b[4, 12)
  step.exchange.transfers.push_back({{b, 8}, 8, {{far, 0}}});   // sends b[8, 16) to rank 1
  p.steps.push_back(step);
  // One process copies in tile order, and so do ranks that do not split it: allowed.
  CHECK_NOTHROW(compile_for(p, config, partition_over_ranks(config, 1, 0)));
  for (std::int32_t r : {0, 1}) {
    CHECK_THROWS_WITH(compile_for(p, config, partition_over_ranks(config, 2, r)),
                      Catch::Contains("transfer 1 sends buffer b (id 1) to another rank") && Catch::Contains("exchange chain"));
  }
  // Reading only bytes the exchange leaves alone, or copying a region onto itself, is fine.
  p.steps[0].exchange.transfers[1] = {{b, 12}, 4, {{far, 0}}};
  p.steps[0].exchange.transfers.push_back({{b, 12}, 4, {{b, 12}}});
  CHECK_NOTHROW(compile_for(p, config, partition_over_ranks(config, 2, 0)));
}
