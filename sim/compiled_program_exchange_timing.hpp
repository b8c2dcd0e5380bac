#pragma once
// How long each tile of an exchange phase takes: the bytes and contiguous regions it sends and
// receives (tiles of one supertile receiving the same transfer share its bus), and when its transfers
// across chips arrive (compiled_program_links.hpp). Engine-internal.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/compiled_program_buffers.hpp"
#include "sim/compiled_program_links.hpp"
#include "sim/compiled_program_phase.hpp"

namespace tilesim::sim::compile {

class ExchangeTiming {
 public:
  ExchangeTiming(const MachineConfig& config, const ProgramBuffers& buffers, PhaseTiles& tiles);

  // The transfer as its source tile sends it.
  void add_send(TileId src_tile, const Transfer& transfer) { send(src_tile, transfer.total_bytes(), transfer.blocks); }
  // The transfer as its destination tiles receive it; touches them.
  void add_receptions(const Transfer& transfer);
  // A counted broadcast (ExchangePlan::broadcasts_counted), sent and received as the listed broadcast
  // to `destinations` (sorted) would be; touches its tiles.
  void add_broadcast_count(const BroadcastCount& count, const std::vector<TileId>& destinations) {
    send(count.src_tile, count.bytes, count.regions);
    receive(destinations.data(), destinations.size(), count.bytes, count.regions);
  }
  // Counted transfers (ExchangePlan::counted): sent and received as listed single-destination ones are.
  void add_count(const TransferCount& count) {
    send(count.src_tile, count.bytes, count.regions);
    receive_alone(count.dst_tile, count.bytes, count.regions);
  }
  // A tile's per-tile sums of counted transfers (ExchangePlan::tile_sums): sent and received alone, as
  // the single-destination transfers they sum.
  void add_tile_sums(TileId tile, std::int64_t sent_bytes, std::int64_t sent_regions, std::int64_t received_bytes,
                     std::int64_t received_regions) {
    send(tile, sent_bytes, sent_regions);
    receive_alone(tile, received_bytes, received_regions);
  }
  // After every transfer of the phase is added: their crossings between chips (LinkTiming::add).
  bool add_link_cycles(const ExchangePlan& plan) { return links_.add(plan); }

  Cycles tile_cycles(TileId tile) const;
  std::int64_t received_bytes(TileId tile) const { return received_bytes_[static_cast<std::size_t>(tile)]; }

  // Zeroes the touched tiles for the next phase (before PhaseTiles::finish forgets them).
  void reset_touched();

 private:
  void send(TileId tile, std::int64_t bytes, std::int64_t regions) {
    const auto t = static_cast<std::size_t>(tile);
    sent_bytes_[t] += bytes;
    sent_regions_[t] += regions;
  }
  // `bytes` in `regions` regions that `tile` alone receives, at the full per-tile cost.
  void receive_alone(TileId tile, std::int64_t bytes, std::int64_t regions) {
    const auto t = static_cast<std::size_t>(tile);
    received_bytes_[t] += bytes;
    received_regions_[t] += regions;
    sole_received_bytes_[t] += bytes;
  }
  // `bytes` in `regions` regions received by each of the sorted `tiles` (a tile listed twice receives
  // twice); tiles of one supertile share the bus.
  void receive(const TileId* tiles, std::size_t count, std::int64_t bytes, std::int64_t regions);

  const MachineConfig& config_;
  const ProgramBuffers& buffers_;
  PhaseTiles& tiles_;
  LinkTiming links_;

  // Per tile.
  std::vector<std::int64_t> sent_bytes_;
  std::vector<std::int64_t> sent_regions_;      // contiguous regions a tile sends (a broadcast counts once)
  std::vector<std::int64_t> received_regions_;  // contiguous regions a tile receives
  std::vector<std::int64_t> received_bytes_;
  // What the tile's receptions cost at the per-tile rate, in integer sums so that neither the order in
  // which transfers are added nor merging them into counts can change it: bytes it alone received from
  // a transfer, and bytes of transfers that k tiles of its supertile received together (each tile
  // counts bytes / k), per k, at [tile * (tiles_per_supertile + 1) + k].
  std::vector<std::int64_t> sole_received_bytes_;
  std::vector<std::int64_t> shared_received_bytes_;
  std::size_t shares_per_tile_ = 1;
  std::vector<TileId> dst_tiles_;  // scratch: one transfer's destination tiles
};

}  // namespace tilesim::sim::compile
