#include "sim/program.hpp"

#include <iterator>
#include <stdexcept>

namespace tilesim::sim {

std::vector<std::int64_t> Program::bytes_per_tile(std::int32_t num_tiles) const {
  std::vector<std::int64_t> bytes(static_cast<std::size_t>(num_tiles), 0);
  for (const auto& b : buffers) {
    if (b.tile < 0 || b.tile >= num_tiles) {
      throw std::logic_error("program " + name + ": buffer " + b.name + " is on tile " + std::to_string(b.tile) +
                             " of a " + std::to_string(num_tiles) + "-tile machine");
    }
    if (b.bytes < 0) {
      throw std::logic_error("program " + name + ": buffer " + b.name + " has " + std::to_string(b.bytes) + " bytes");
    }
    auto& used = bytes[static_cast<std::size_t>(b.tile)];
    used = align_buffer_offset(used) + b.bytes;
  }
  return bytes;
}

void ExchangePlan::append(ExchangePlan&& other) {
  transfers.insert(transfers.end(), std::make_move_iterator(other.transfers.begin()),
                   std::make_move_iterator(other.transfers.end()));
  counted.insert(counted.end(), other.counted.begin(), other.counted.end());
  other.transfers.clear();
  other.counted.clear();
}

}  // namespace tilesim::sim
