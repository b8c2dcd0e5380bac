// Each tile's cycles in an exchange phase (compiled_program_exchange_timing.hpp).
#include "sim/compiled_program_exchange_timing.hpp"

#include <algorithm>

#include "sim/tile_cost.hpp"

namespace tilesim::sim::compile {

ExchangeTiming::ExchangeTiming(const MachineConfig& config, const ProgramBuffers& buffers, PhaseTiles& tiles)
    : config_(config), buffers_(buffers), tiles_(tiles), links_(config, buffers) {
  const auto tiles_count = static_cast<std::size_t>(config.num_tiles);
  sent_bytes_.assign(tiles_count, 0);
  sent_regions_.assign(tiles_count, 0);
  received_regions_.assign(tiles_count, 0);
  received_bytes_.assign(tiles_count, 0);
  sole_received_bytes_.assign(tiles_count, 0);
  shared_received_bytes_.assign(tiles_count, 0.0);
}

// Tiles of one supertile that receive the same transfer share the bus and receive at a multiple of the
// per-tile rate, so each counts bytes / (number receiving).
void ExchangeTiming::add_receptions(const Transfer& transfer) {
  if (transfer.dst.size() == 1) {
    const TileId tile = buffers_.tile_of(transfer.dst[0].buffer);
    tiles_.touch(tile);
    received_bytes_[static_cast<std::size_t>(tile)] += transfer.total_bytes();
    received_regions_[static_cast<std::size_t>(tile)] += transfer.blocks;
    sole_received_bytes_[static_cast<std::size_t>(tile)] += transfer.total_bytes();
    return;
  }
  dst_tiles_.clear();
  for (const auto& ref : transfer.dst) dst_tiles_.push_back(buffers_.tile_of(ref.buffer));
  std::sort(dst_tiles_.begin(), dst_tiles_.end());
  const TileId per_supertile = config_.tiles_per_supertile;
  std::size_t run_begin = 0;
  while (run_begin < dst_tiles_.size()) {
    const TileId supertile = dst_tiles_[run_begin] / per_supertile;
    std::size_t run_end = run_begin;
    std::int64_t distinct_tiles = 0;
    while (run_end < dst_tiles_.size() && dst_tiles_[run_end] / per_supertile == supertile) {
      if (run_end == run_begin || dst_tiles_[run_end] != dst_tiles_[run_end - 1]) ++distinct_tiles;
      ++run_end;
    }
    for (std::size_t i = run_begin; i < run_end; ++i) {
      const TileId tile = dst_tiles_[i];
      tiles_.touch(tile);
      received_bytes_[static_cast<std::size_t>(tile)] += transfer.total_bytes();
      received_regions_[static_cast<std::size_t>(tile)] += transfer.blocks;
      if (distinct_tiles == 1) {
        sole_received_bytes_[static_cast<std::size_t>(tile)] += transfer.total_bytes();
      } else {
        shared_received_bytes_[static_cast<std::size_t>(tile)] +=
            static_cast<double>(transfer.total_bytes()) / static_cast<double>(distinct_tiles);
      }
    }
    run_begin = run_end;
  }
}

// Bytes at the exchange rate, or the arrival of its transfers across chips if later, plus a cost per
// contiguous region the tile sends or receives (each region is its own exchange instruction sequence).
Cycles ExchangeTiming::tile_cycles(TileId tile) const {
  const auto t = static_cast<std::size_t>(tile);
  const double effective_received_bytes = static_cast<double>(sole_received_bytes_[t]) + shared_received_bytes_[t];
  return std::max(tile_exchange_cycles(sent_bytes_[t], effective_received_bytes, config_.exchange_bytes_per_cycle),
                  links_.arrival_cycles(tile)) +
         config_.exchange_cycles_per_region * std::max(sent_regions_[t], received_regions_[t]);
}

void ExchangeTiming::reset_touched() {
  for (TileId tile : tiles_.touched()) {
    const auto t = static_cast<std::size_t>(tile);
    sent_bytes_[t] = 0;
    sent_regions_[t] = 0;
    received_regions_[t] = 0;
    received_bytes_[t] = 0;
    sole_received_bytes_[t] = 0;
    shared_received_bytes_[t] = 0.0;
    links_.reset(tile);
  }
}

}  // namespace tilesim::sim::compile
