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
  shares_per_tile_ = static_cast<std::size_t>(config.tiles_per_supertile) + 1;
  shared_received_bytes_.assign(tiles_count * shares_per_tile_, 0);
}

// Tiles of one supertile that receive the same transfer share the bus and receive at a multiple of the
// per-tile rate, so each counts bytes / (number receiving).
void ExchangeTiming::add_receptions(const Transfer& transfer) {
  if (transfer.dst.size() == 1) {
    const TileId tile = buffers_.tile_of(transfer.dst[0].buffer);
    tiles_.touch(tile);
    receive_alone(tile, transfer.total_bytes(), transfer.blocks);
    return;
  }
  dst_tiles_.clear();
  for (const auto& ref : transfer.dst) dst_tiles_.push_back(buffers_.tile_of(ref.buffer));
  std::sort(dst_tiles_.begin(), dst_tiles_.end());
  receive(dst_tiles_.data(), dst_tiles_.size(), transfer.total_bytes(), transfer.blocks);
}

void ExchangeTiming::receive(const TileId* tiles, std::size_t count, std::int64_t bytes, std::int64_t regions) {
  const TileId per_supertile = config_.tiles_per_supertile;
  std::size_t run_begin = 0;
  while (run_begin < count) {
    const TileId supertile = tiles[run_begin] / per_supertile;
    std::size_t run_end = run_begin;
    std::size_t distinct_tiles = 0;
    while (run_end < count && tiles[run_end] / per_supertile == supertile) {
      if (run_end == run_begin || tiles[run_end] != tiles[run_end - 1]) ++distinct_tiles;
      ++run_end;
    }
    for (std::size_t i = run_begin; i < run_end; ++i) {
      tiles_.touch(tiles[i]);
      if (distinct_tiles == 1) {
        receive_alone(tiles[i], bytes, regions);
        continue;
      }
      const auto t = static_cast<std::size_t>(tiles[i]);
      received_bytes_[t] += bytes;
      received_regions_[t] += regions;
      shared_received_bytes_[t * shares_per_tile_ + distinct_tiles] += bytes;
    }
    run_begin = run_end;
  }
}

// Bytes at the exchange rate, or the arrival of its transfers across chips if later, plus a cost per
// contiguous region the tile sends or receives (each region is its own exchange instruction sequence).
Cycles ExchangeTiming::tile_cycles(TileId tile) const {
  const auto t = static_cast<std::size_t>(tile);
  double effective_received_bytes = static_cast<double>(sole_received_bytes_[t]);
  for (std::size_t k = 2; k < shares_per_tile_; ++k) {
    const std::int64_t shared = shared_received_bytes_[t * shares_per_tile_ + k];
    if (shared) effective_received_bytes += static_cast<double>(shared) / static_cast<double>(k);
  }
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
    std::fill_n(shared_received_bytes_.begin() + static_cast<std::ptrdiff_t>(t * shares_per_tile_), shares_per_tile_, 0);
    links_.reset(tile);
  }
}

}  // namespace tilesim::sim::compile
