#pragma once
// Real bytes of each tile's SRAM for functional runs. A tile's arena is allocated only when a loaded
// program places buffers on it (1472 x 624 KiB up front would be ~1 GB for nothing), sized to what
// that program needs, and kept across programs, growing only.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/machine_config.hpp"

namespace tilesim::sim {

class TileArenas {
 public:
  explicit TileArenas(std::int32_t tile_slots)
      : bases_(static_cast<std::size_t>(tile_slots)), capacity_bytes_(static_cast<std::size_t>(tile_slots), 0) {}

  // Makes the tile's arena at least `bytes` long and returns it (null when the tile never held
  // bytes). Contents are not kept when it grows, nor zeroed: a new program owns the bytes and its
  // planner writes every byte it reads.
  std::byte* reserve(TileId tile, std::int64_t bytes) {
    const auto t = static_cast<std::size_t>(tile);
    if (bytes > capacity_bytes_[t]) {
      bases_[t].reset();  // free first, so peak memory is the larger arena, not both
      bases_[t].reset(new std::byte[static_cast<std::size_t>(bytes)]);
      capacity_bytes_[t] = bytes;
    }
    return bases_[t].get();
  }

  std::byte* base(TileId tile) const { return bases_[static_cast<std::size_t>(tile)].get(); }

  std::int64_t allocated_bytes() const {
    std::int64_t total = 0;
    for (auto c : capacity_bytes_) total += c;
    return total;
  }

 private:
  std::vector<std::unique_ptr<std::byte[]>> bases_;
  std::vector<std::int64_t> capacity_bytes_;
};

}  // namespace tilesim::sim
