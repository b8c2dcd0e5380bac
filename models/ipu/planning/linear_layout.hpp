#pragma once
// Tensors mapped linearly over the tiles, as Poplar maps a tensor nobody planned for: its flat
// elements are cut into equal contiguous ranges, one per tile, in grains, with a minimum number of
// bytes per tile (so small tensors occupy few tiles). Op outputs end in this layout, and a
// scatter-add's zeroed output starts in it, so the programs pay the exchanges that move data between
// a plan's layout and the linear one.
#include <cstdint>
#include <vector>

#include "models/ipu/planning/blocks.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "sim/program.hpp"

namespace tilesim::ipu {

struct LinearLayout {
  std::int64_t elements = 0;
  std::int64_t elements_per_tile = 0;
  std::int64_t tiles_used = 0;
  Range tile_range(std::int64_t tile) const { return block(elements, elements_per_tile, tile); }
};

LinearLayout linear_layout(std::int64_t elements, std::int64_t element_bytes, const IpuMachine& machine);

// Declares one buffer per used tile of `layout`; returns them (index = tile) and appends their flat
// pieces (TensorPiece rows = elements, cols = 1) to `pieces`.
std::vector<sim::BufferId> add_linear_buffers(sim::Program& program, const std::string& name, const LinearLayout& layout,
                                              std::int64_t element_bytes, std::vector<TensorPiece>* pieces);

// Transfers that move every element of the rectangular `from` pieces (of a row-major tensor `width`
// wide) to its place in the linear buffers `to`; or the reverse when `to_linear` is false.
void add_linear_transfers(sim::ExchangePlan& exchange, const std::vector<TensorPiece>& from, std::int64_t width,
                          const LinearLayout& layout, const std::vector<sim::BufferId>& linear, std::int64_t element_bytes,
                          bool to_linear);

}  // namespace tilesim::ipu
