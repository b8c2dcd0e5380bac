#include "models/ipu/programs/block_placement.hpp"

#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/programs/linear_buffers.hpp"

namespace tilesim::ipu {

void place_block(sim::Program& program, sim::ExchangePlan& exchange, std::vector<TensorPiece>& input, const std::string& name,
                 Range rows, Range cols, sim::TileId holder, const std::vector<sim::TileId>& copy_tiles,
                 const BlockSource& source, std::vector<sim::BufferId>& buffer_of) {
  const std::int64_t bytes = rows.size() * cols.size() * source.value_bytes;
  const auto held = program.add_buffer(name, holder, bytes);
  buffer_of[static_cast<std::size_t>(holder)] = held;
  std::vector<sim::BufferId> copies;
  copies.reserve(copy_tiles.size());
  const auto copy_name = program.buffer_name(name + " copy");
  for (const sim::TileId t : copy_tiles) {
    copies.push_back(program.add_buffer(copy_name, t, bytes));
    buffer_of[static_cast<std::size_t>(t)] = copies.back();
  }
  const TensorPiece block{held, rows.begin, rows.size(), cols.begin, cols.size()};
  if (source.linear) {
    broadcast_from_linear(program, exchange, block, copies, source.width, *source.linear, *source.linear_buffers, source.value_bytes);
    return;
  }
  input.push_back(block);
  if (copies.empty()) return;
  sim::Transfer t{{held, 0}, bytes, {}};
  for (const auto c : copies) t.dst.push_back({c, 0});
  // The copies and the held block are only read (a gather's table, a scatter's messages).
  t.read_only_copies = true;
  exchange.transfers.push_back(std::move(t));
}

}  // namespace tilesim::ipu
