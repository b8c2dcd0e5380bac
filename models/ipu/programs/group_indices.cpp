#include "models/ipu/programs/op_program.hpp"

#include "models/ipu/machine/element_bytes.hpp"

namespace tilesim::ipu {

void add_group_indices(sim::Program& program, sim::ExchangePlan& exchange, const TileGrid& grid, std::int64_t i,
                       std::int64_t range_begin, std::int64_t count, std::vector<sim::BufferId>& buffer_of,
                       std::vector<TensorPiece>& pieces) {
  const auto holder = grid(i, 0, 0);
  const auto held = program.add_buffer("indices", holder, count * kIndexBytes);
  buffer_of[static_cast<std::size_t>(holder)] = held;
  pieces.push_back({held, range_begin, count, 0, 1});
  if (grid.row_blocks * grid.column_blocks == 1) return;
  // One broadcast: consecutive tiles of the group share exchange buses and receive at the double rate.
  sim::Transfer t{{held, 0}, count * kIndexBytes, {}};
  const auto copy_name = program.buffer_name("indices copy");
  for (std::int64_t s = 0; s < grid.row_blocks; ++s) {
    for (std::int64_t h = 0; h < grid.column_blocks; ++h) {
      if (s == 0 && h == 0) continue;
      const auto copy = program.add_buffer(copy_name, grid(i, s, h), count * kIndexBytes);
      buffer_of[static_cast<std::size_t>(grid(i, s, h))] = copy;
      t.dst.push_back({copy, 0});
    }
  }
  t.read_only_copies = true;  // indices are only read
  exchange.transfers.push_back(std::move(t));
}

}  // namespace tilesim::ipu
