#pragma once
// A Program is what the engine runs: buffers placed on tiles, then a list of BSP supersteps, each a
// compute set (vertices on tiles), a sync, and an exchange (who sends which bytes to whom).
// Models build Programs (models/ipu/programs/); the engine sequences them in time.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/buffer_ref.hpp"
#include "sim/inline_list.hpp"
#include "sim/machine_config.hpp"
#include "sim/transfer_destinations.hpp"

namespace tilesim::sim {

// Every buffer starts on this boundary in its tile's SRAM, so vertex bodies may use any scalar type.
constexpr std::int64_t buffer_alignment_bytes = 8;
constexpr std::int64_t align_buffer_offset(std::int64_t offset_bytes) {
  return (offset_bytes + buffer_alignment_bytes - 1) / buffer_alignment_bytes * buffer_alignment_bytes;
}

// A region of one tile's SRAM. The engine lays buffers out in declaration order per tile and checks
// that each tile's total fits sram_bytes_per_tile.
// Its name is an index into Program::buffer_names (Program::name_of): a program declares thousands of
// buffers under a dozen names, and a string of its own for each was a heap block per buffer.
struct BufferDecl {
  std::uint32_t name = 0;
  TileId tile = 0;
  std::int64_t bytes = 0;
};


// What a vertex's functional body sees: the addresses of the buffer refs it declared, on its tile.
class VertexContext {
 public:
  VertexContext(std::byte* const* addresses, std::size_t count) : addresses_(addresses), count_(count) {}
  std::size_t size() const { return count_; }
  std::byte* data(std::size_t k) const { return addresses_[k]; }
  template <class T>
  T* as(std::size_t k) const { return reinterpret_cast<T*>(addresses_[k]); }

 private:
  std::byte* const* addresses_;
  std::size_t count_;
};

// A vertex's functional body: what it does to the buffers it declared.
using VertexBody = std::function<void(const VertexContext&)>;

// A piece of work on one tile. Its cost comes from a model's pure cost function: per-worker cycles
// (one entry per worker context for a multi-worker vertex, or a single entry for a vertex that runs
// on one worker) plus supervisor cycles. The engine turns that into tile cycles (barrel scheduling).
struct Vertex {
  std::string codelet;                      // name for stats and traces, e.g. "MultiSlice"
  InlineList<Cycles, 6> worker_cycles;      // size worker_contexts (multi-worker) or 1 (single-worker)
  Cycles supervisor_cycles = 0;
  InlineList<BufferRef, 4> buffers;         // all on the vertex's tile
  VertexBody execute;                       // functional mode only; may be empty
};

struct TileVertex {
  TileId tile = 0;
  Vertex vertex;
};

struct ComputeSet {
  std::string name;
  std::vector<TileVertex> vertices;
  bool empty() const { return vertices.empty(); }
  // A new vertex on `tile`, made in place for the builder to fill: a vertex is a few hundred bytes
  // (its lists inline) and an op's program has thousands, so building one aside and moving it in cost
  // a timing-only point several percent of its time.
  Vertex& add_vertex(TileId tile) {
    TileVertex& added = vertices.emplace_back();
    added.tile = tile;
    return added.vertex;
  }
};

// One compiled transfer: `blocks` blocks of `bytes` each, block k read from src + k * src_stride_bytes
// and written to each destination at dst + k * dst_stride_bytes (a broadcast when there are several
// destinations). The receiving tiles are the destinations' tiles. A strided transfer is one exchange
// descriptor for a column block of rows, as a compiled exchange program lists regions.
//
// `read_only_copies` is the builder's promise that each destination is a whole buffer that nothing
// reads before this exchange and nothing writes after it, and that nothing writes the source region
// after it either. A functional engine then lets such destinations share the source's bytes instead of
// copying them (sim/shared_copies.hpp); the exchange's cost is the same.
struct Transfer {
  BufferRef src;
  std::int64_t bytes = 0;
  TransferDestinations dst;
  std::int64_t blocks = 1;
  std::int64_t src_stride_bytes = 0;
  std::int64_t dst_stride_bytes = 0;
  bool read_only_copies = false;

  Transfer() = default;
  // The fields in order, as a brace list gives them ({src, bytes, {dst...}, blocks, strides}). A
  // constructor rather than an aggregate so that ExchangePlan::add makes a transfer in place without
  // first zeroing it.
  Transfer(const BufferRef& src_ref, std::int64_t bytes_each, TransferDestinations destinations, std::int64_t block_count = 1,
           std::int64_t src_stride = 0, std::int64_t dst_stride = 0, bool read_only = false)
      : src(src_ref),
        bytes(bytes_each),
        dst(std::move(destinations)),
        blocks(block_count),
        src_stride_bytes(src_stride),
        dst_stride_bytes(dst_stride),
        read_only_copies(read_only) {}

  std::int64_t total_bytes() const { return bytes * blocks; }
};

// Single-destination transfers from one tile to another, counted rather than listed: `bytes` in all,
// in `regions` contiguous regions (a listed transfer's total_bytes() and blocks). Only a timing-only
// program (Program::timing_only) has them: the engine times an exchange by these per-tile sums alone,
// so a builder whose bulk exchanges list hundreds of thousands of transfers may count them instead and
// leave out the buffers and offsets that only a functional run reads. Counts of one pair add up
// exactly (tests/models/ipu/timing_only_sequence_test.cpp holds them equal to the listed transfers).
struct TransferCount {
  TileId src_tile = 0;
  TileId dst_tile = 0;
  std::int64_t bytes = 0;
  std::int64_t regions = 0;
};

// A broadcast counted rather than listed (timing-only programs, as TransferCount): from one tile to
// every tile of a destination set (ExchangePlan::destination_sets), `bytes` in `regions` regions to
// each, as a listed transfer to those destinations would be received (tiles of one supertile sharing
// its bus).
struct BroadcastCount {
  TileId src_tile = 0;
  std::uint32_t destination_set = 0;
  std::int64_t bytes = 0;
  std::int64_t regions = 0;
};

struct ExchangePlan {
  std::string name;
  std::vector<Transfer> transfers;
  // Timing-only programs only:
  std::vector<TransferCount> counted;
  // Counted single-destination transfers between tiles of one chip, summed per tile once
  // enable_tile_sums is called: [4 t] bytes tile t sends, [4 t + 1] regions it sends, [4 t + 2] bytes it
  // receives, [4 t + 3] regions it receives. The engine times an exchange by these sums alone, so an
  // exchange joining every pair of thousands of tiles (an op's blocks and the linear layout) needs no
  // list of its pairs; transfers between chips are still listed in `counted` (the links route pairs).
  std::vector<std::int64_t> tile_sums;
  std::int32_t tile_sums_tiles_per_chip = 0;  // 0: one chip
  bool tile_sums_used = false;
  std::vector<BroadcastCount> broadcasts_counted;
  std::vector<std::vector<TileId>> destination_sets;  // each sorted; a tile may appear more than once

  ExchangePlan() = default;
  // A name and listed transfers, as a brace list gives them ({name, {transfers...}}).
  ExchangePlan(std::string plan_name, std::vector<Transfer> listed = {})
      : name(std::move(plan_name)), transfers(std::move(listed)) {}
  bool empty() const { return transfers.empty() && counted.empty() && broadcasts_counted.empty() && !tile_sums_used; }
  // Lists a transfer to one destination, made in place: a large op lists hundreds of thousands, and
  // each would otherwise be built as a temporary and moved into the list (or zeroed first).
  Transfer& add(const BufferRef& src, std::int64_t bytes, const BufferRef& dst, std::int64_t blocks = 1,
                std::int64_t src_stride_bytes = 0, std::int64_t dst_stride_bytes = 0) {
    return transfers.emplace_back(src, bytes, TransferDestinations{dst}, blocks, src_stride_bytes, dst_stride_bytes);
  }
  // Counts a single-destination transfer (TransferCount), merged into the last count when that one
  // joins the same tiles: a builder walking a tensor's rows in order meets the same pair in a row.
  void count(TileId src_tile, TileId dst_tile, std::int64_t bytes, std::int64_t regions) {
    if (!tile_sums.empty() && static_cast<std::size_t>(src_tile) < tile_sums.size() / 4 &&
        static_cast<std::size_t>(dst_tile) < tile_sums.size() / 4 &&
        (tile_sums_tiles_per_chip == 0 || src_tile / tile_sums_tiles_per_chip == dst_tile / tile_sums_tiles_per_chip)) {
      const auto s = 4 * static_cast<std::size_t>(src_tile), d = 4 * static_cast<std::size_t>(dst_tile);
      tile_sums[s] += bytes;
      tile_sums[s + 1] += regions;
      tile_sums[d + 2] += bytes;
      tile_sums[d + 3] += regions;
      tile_sums_used = true;
      return;
    }
    if (!counted.empty() && counted.back().src_tile == src_tile && counted.back().dst_tile == dst_tile) {
      counted.back().bytes += bytes;
      counted.back().regions += regions;
      return;
    }
    counted.push_back({src_tile, dst_tile, bytes, regions});
  }
  // Sums this plan's counts between tiles of one chip per tile from now on (tile_sums), for a machine
  // of `num_tiles` tiles, `tiles_per_chip` to a chip (0: one chip). Counts off the machine stay listed,
  // for the engine to refuse by name.
  void enable_tile_sums(std::int32_t num_tiles, std::int32_t tiles_per_chip) {
    if (!tile_sums.empty()) return;
    tile_sums.assign(4 * static_cast<std::size_t>(num_tiles), 0);
    tile_sums_tiles_per_chip = tiles_per_chip;
  }
  // A destination set for broadcast counts (sorted here); returns its index.
  std::uint32_t add_destination_set(std::vector<TileId> tiles);
  // Counts a broadcast (BroadcastCount), merged into the last one when that one has the same source
  // tile and destination set.
  void count_broadcast(TileId src_tile, std::uint32_t destination_set, std::int64_t bytes, std::int64_t regions) {
    if (!broadcasts_counted.empty() && broadcasts_counted.back().src_tile == src_tile &&
        broadcasts_counted.back().destination_set == destination_set) {
      broadcasts_counted.back().bytes += bytes;
      broadcasts_counted.back().regions += regions;
      return;
    }
    broadcasts_counted.push_back({src_tile, destination_set, bytes, regions});
  }
  // Moves `other`'s transfers and counts to the end of this plan's (one exchange carrying both).
  void append(ExchangePlan&& other);
};

// compute, then sync, then exchange. Either phase may be empty; the sync is always there, except after
// a program's last superstep when its exchange is empty (a sync only separates compute from the
// exchange after it, and whatever runs next brings its own).
struct Superstep {
  std::string name;
  ComputeSet compute;
  ExchangePlan exchange;
};

struct Program {
  std::string name;
  std::vector<BufferDecl> buffers;
  std::vector<Superstep> steps;
  // Built only to be timed (Mode::timing_only): its exchanges may count transfers rather than list
  // them (ExchangePlan::counted) and its vertices may have no body (Vertex::execute), so the engine
  // refuses to load it functionally.
  bool timing_only = false;
  // A timing-only program's machine, for exchanges that sum their counts per tile
  // (ExchangePlan::enable_tile_sums): its tiles (0: the builder lists counts) and tiles per chip.
  std::int32_t tile_sums_num_tiles = 0;
  std::int32_t tile_sums_tiles_per_chip = 0;

  std::vector<std::string> buffer_names;  // each name once, in the order first declared

  BufferId add_buffer(std::string_view buffer_name, TileId tile, std::int64_t bytes) {
    return add_buffer(BufferName{intern_buffer_name(buffer_name)}, tile, bytes);
  }
  // A name interned once (buffer_name) for a builder's loop declaring many buffers of it.
  struct BufferName {
    std::uint32_t id;
  };
  BufferName buffer_name(std::string_view name) { return {intern_buffer_name(name)}; }
  BufferId add_buffer(BufferName name, TileId tile, std::int64_t bytes) {
    buffers.push_back({name.id, tile, bytes});
    return static_cast<BufferId>(buffers.size() - 1);
  }
  const std::string& name_of(const BufferDecl& decl) const { return buffer_names[decl.name]; }
  const std::string& name_of(BufferId buffer) const { return name_of(buffers[static_cast<std::size_t>(buffer)]); }
  // The tile a declared buffer is on (what a counted transfer records for it).
  TileId tile_of(BufferId buffer) const { return buffers[static_cast<std::size_t>(buffer)].tile; }
  // Bytes of SRAM each tile needs for this program (index = tile), sized to num_tiles: the engine's
  // layout, buffers in declaration order, each aligned to buffer_alignment_bytes.
  std::vector<std::int64_t> bytes_per_tile(std::int32_t num_tiles) const;

  // add_buffer's: the index of `name` in buffer_names, added when new (the names used last tried first,
  // then a scan, or the map past kScannedBufferNames).
  std::uint32_t intern_buffer_name(std::string_view name);
  static constexpr std::size_t kScannedBufferNames = 32;
  std::map<std::string, std::uint32_t, std::less<>> buffer_name_ids;  // filled once names exceed the scan
  std::array<std::uint32_t, 4> recent_buffer_names{};                  // indices into buffer_names
  std::size_t next_recent_buffer_name = 0;
};

}  // namespace tilesim::sim
