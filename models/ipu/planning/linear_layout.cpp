#include "models/ipu/planning/linear_layout.hpp"

#include <algorithm>

namespace tilesim::ipu {

LinearLayout linear_layout(std::int64_t elements, std::int64_t element_bytes, const IpuMachine& machine) {
  LinearLayout l;
  l.elements = elements;
  const std::int64_t grain = std::max<std::int64_t>(1, machine.planner.column_grain_bytes / element_bytes);
  const std::int64_t min_elements = std::max<std::int64_t>(1, machine.planner.linear_min_bytes_per_tile / element_bytes);
  const std::int64_t even_share = ceil_div(ceil_div(elements, machine.chip.num_tiles), grain) * grain;
  l.elements_per_tile = std::max(even_share, ceil_div(min_elements, grain) * grain);
  l.tiles_used = ceil_div(elements, l.elements_per_tile);
  return l;
}

std::int64_t linear_tile_bytes(std::int64_t elements, std::int64_t element_bytes, const IpuMachine& machine) {
  return linear_layout(elements, element_bytes, machine).elements_per_tile * element_bytes;
}

}  // namespace tilesim::ipu
