#pragma once
// What load() turns a Program into: the program checked, its buffers placed, and every phase resolved
// into per-tile work (cycles, vertex address tables, exchange copies), so that run() only sequences
// precomputed work in time. Engine-internal.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine.hpp"
#include "sim/machine_config.hpp"
#include "sim/program.hpp"
#include "sim/rank_partition.hpp"
#include "sim/stats.hpp"

namespace tilesim::sim {

// Throws std::logic_error naming the machine and the field when a configuration cannot be simulated.
void validate_config(const MachineConfig& config, std::int32_t tile_slots);

struct BufferPlacement {
  TileId tile = 0;
  std::int64_t offset_bytes = 0;  // from the start of the tile's arena
  std::int64_t bytes = 0;
};

struct BufferLayout {
  std::vector<BufferPlacement> buffers;  // index = BufferId
  std::vector<std::int64_t> tile_bytes;  // SRAM used per tile (index = tile), alignment padding included
  std::int64_t peak_tile_bytes = 0;
  TileId peak_tile = -1;  // lowest tile with peak_tile_bytes; -1 when no tile holds bytes
};

// Places buffers per tile in declaration order, each at a multiple of buffer_alignment_bytes. Throws
// tilesim::PlanError naming program, tile, bytes needed and capacity when a tile's SRAM overflows, and
// std::logic_error for a buffer on a tile that does not exist or with negative size.
BufferLayout lay_out_buffers(const Program& program, const MachineConfig& config);

// One tile's share of one phase.
struct TileWork {
  TileId tile = 0;
  Cycles cycles = 0;        // the tile's own phase length, fixed cost excluded
  std::uint32_t first = 0;  // compute: into CompiledProgram::vertices; exchange: into ::copies
  std::uint32_t count = 0;  // zero in timing-only mode
  std::uint32_t label = 0;  // into CompiledProgram::labels: the tile's slice name in traces
};

struct CompiledPhase {
  PhaseKind kind = PhaseKind::compute;
  std::uint32_t superstep = 0;  // into CompiledProgram::superstep_names
  Cycles fixed_cycles = 0;      // compute_fixed_cycles, sync_cycles or exchange_fixed_cycles
  std::vector<TileWork> tiles;  // tiles involved, ascending id; empty for a sync
  Cycles slowest_cycles = 0;    // max of tiles[].cycles
  TileId slowest_tile = -1;     // lowest id among those with slowest_cycles
  std::int64_t bytes = 0;       // exchange: bytes received over all tiles
  // Exchange of a program spread over ranks: into CompiledProgram::messages; -1 otherwise.
  std::int32_t messages = -1;
};

struct VertexItem {
  std::function<void(const VertexContext&)> execute;  // may be empty
  std::uint32_t first_address = 0;                    // into CompiledProgram::addresses
  std::uint32_t address_count = 0;
};

struct CopyItem {
  const std::byte* src = nullptr;
  std::byte* dst = nullptr;
  std::int64_t bytes = 0;
  std::int64_t blocks = 1;
  std::int64_t src_stride_bytes = 0;
  std::int64_t dst_stride_bytes = 0;
};

// One transfer's bytes sent to another rank: `blocks` blocks of `bytes`, packed one after another in
// the message.
struct RankSend {
  const std::byte* src = nullptr;
  std::int64_t bytes = 0;
  std::int64_t blocks = 1;
  std::int64_t src_stride_bytes = 0;

  std::int64_t total_bytes() const { return bytes * blocks; }
};

// What one exchange phase of a program spread over ranks moves between this rank and the others: a
// transfer whose source tile is here and whose destinations include tiles of rank q is sent to q once
// (however many of q's tiles receive it); a transfer from another rank's tile to tiles here is
// received once, and its copies (CompiledProgram::copies) read it from the receive buffer. Both sides
// list a pair's transfers in plan order, so their layouts agree without being sent.
struct PhaseMessages {
  std::vector<std::int64_t> send_bytes;     // to each rank (index = rank)
  std::vector<std::int64_t> receive_bytes;  // from each rank, packed by rank into CompiledProgram::receive_buffer
  std::vector<RankSend> sends;              // by destination rank, each rank's in plan order
};

struct CompiledProgram {
  std::string name;
  MachineConfig config;
  Mode mode = Mode::timing_only;
  // Which tiles this process holds and runs (all of them unless the program is spread over ranks).
  RankPartition partition;
  BufferLayout layout;
  std::vector<std::string> superstep_names;
  std::vector<std::string> labels;
  std::vector<CompiledPhase> phases;  // in execution order; empty compute and exchange phases left out
  // Functional mode only: where each buffer's bytes are (index = BufferId; a shared copy's are its
  // source's, sim/shared_copies.hpp), and what tiles execute on wake-up.
  std::vector<std::byte*> buffer_addresses;
  std::vector<char> shared_copy;
  std::vector<VertexItem> vertices;
  std::vector<std::byte*> addresses;
  std::vector<CopyItem> copies;
  // Spread over ranks: each exchange phase's messages, where received bytes land (as large as the
  // largest phase receives; phases run one at a time), and the most bytes any phase sends.
  std::vector<PhaseMessages> messages;
  std::unique_ptr<std::byte[]> receive_buffer;
  std::int64_t send_buffer_bytes = 0;
  // Totals known before running.
  std::int64_t vertex_count = 0;
  std::int64_t exchange_bytes_sent = 0;
  std::int64_t exchange_bytes_received = 0;
};

// Resolves every superstep of `program` into phases. `tile_bases` (functional mode) holds each tile's
// arena, at least layout.tile_bytes long. Throws std::logic_error for vertices or transfers that refer
// to tiles, buffers or byte ranges that do not exist, or to buffers on another tile than the vertex's.
//
// With a partition spread over ranks (functional mode), `tile_bases` need hold only this rank's tiles:
// vertices and copies are resolved for this rank's tiles alone, and the traffic across ranks into
// `messages`, while every phase's timing is still computed from the whole program, so each rank
// simulates the same cycles. It then also throws std::logic_error for an exchange in which a transfer
// whose bytes cross ranks reads a region that a transfer of the same exchange writes: one process
// copies in one order and ranks could not reproduce it.
CompiledProgram compile_program(const Program& program, const MachineConfig& config, Mode mode, BufferLayout layout,
                                const std::vector<std::byte*>& tile_bases, const RankPartition& partition = {});

}  // namespace tilesim::sim
