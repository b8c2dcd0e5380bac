#pragma once
// Tensors mapped linearly over the tiles, as Poplar maps a tensor nobody planned for: its flat
// elements are cut into equal contiguous ranges, one per tile, in grains, with a minimum number of
// bytes per tile (so small tensors occupy few tiles). Op outputs end in this layout, and a
// scatter-add's zeroed output starts in it, so the planner charges the exchanges that move data
// between a plan's layout and the linear one (the programs' side, the buffers and transfers of this
// layout, is programs/linear_buffers.hpp).
#include <cstdint>

#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/planning/blocks.hpp"

namespace tilesim::ipu {

struct LinearLayout {
  std::int64_t elements = 0;
  std::int64_t elements_per_tile = 0;
  std::int64_t tiles_used = 0;
  Range tile_range(std::int64_t tile) const { return block(elements, elements_per_tile, tile); }
};

LinearLayout linear_layout(std::int64_t elements, std::int64_t element_bytes, const IpuMachine& machine);

// Bytes of a linearly mapped tensor of `elements` on its busiest tile (its first tile's share).
std::int64_t linear_tile_bytes(std::int64_t elements, std::int64_t element_bytes, const IpuMachine& machine);

}  // namespace tilesim::ipu
