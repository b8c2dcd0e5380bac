#include "sim/program.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace tilesim::sim {

namespace {

bool same_name(const std::string& known, std::string_view name) {
  return known.size() == name.size() && std::char_traits<char>::compare(known.data(), name.data(), name.size()) == 0;
}

}  // namespace

std::uint32_t Program::intern_buffer_name(std::string_view name) {
  // Builders alternate between a few names (a block, its copies, the next block), so the names used
  // last are tried first; then a scan, comparing lengths first, while the program has few names (a
  // map's string compares cost more), the map past that.
  for (const std::uint32_t k : recent_buffer_names)
    if (k < buffer_names.size() && same_name(buffer_names[k], name)) return k;
  std::uint32_t id = static_cast<std::uint32_t>(buffer_names.size());
  if (buffer_names.size() <= kScannedBufferNames) {
    for (std::uint32_t k = 0; k < buffer_names.size(); ++k) {
      if (same_name(buffer_names[k], name)) {
        id = k;
        break;
      }
    }
  } else if (const auto found = buffer_name_ids.find(name); found != buffer_name_ids.end()) {
    id = found->second;
  }
  if (id == buffer_names.size()) {
    buffer_names.emplace_back(name);
    if (buffer_names.size() == kScannedBufferNames + 1) {
      for (std::uint32_t k = 0; k < buffer_names.size(); ++k) buffer_name_ids.emplace(buffer_names[k], k);
    } else if (buffer_names.size() > kScannedBufferNames + 1) {
      buffer_name_ids.emplace(buffer_names.back(), id);
    }
  }
  recent_buffer_names[next_recent_buffer_name] = id;
  next_recent_buffer_name = (next_recent_buffer_name + 1) % recent_buffer_names.size();
  return id;
}

std::vector<std::int64_t> Program::bytes_per_tile(std::int32_t num_tiles) const {
  std::vector<std::int64_t> bytes(static_cast<std::size_t>(num_tiles), 0);
  for (const auto& b : buffers) {
    if (b.tile < 0 || b.tile >= num_tiles) {
      throw std::logic_error("program " + name + ": buffer " + name_of(b) + " is on tile " + std::to_string(b.tile) +
                             " of a " + std::to_string(num_tiles) + "-tile machine");
    }
    if (b.bytes < 0) {
      throw std::logic_error("program " + name + ": buffer " + name_of(b) + " has " + std::to_string(b.bytes) + " bytes");
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
  if (other.tile_sums_used) {
    if (tile_sums.empty()) {
      tile_sums = std::move(other.tile_sums);
      tile_sums_tiles_per_chip = other.tile_sums_tiles_per_chip;
    } else {
      if (tile_sums.size() != other.tile_sums.size() || tile_sums_tiles_per_chip != other.tile_sums_tiles_per_chip)
        throw std::logic_error("ExchangePlan::append: per-tile sums of machines of different tiles (" + other.name + " onto " + name + ")");
      for (std::size_t k = 0; k < tile_sums.size(); ++k) tile_sums[k] += other.tile_sums[k];
    }
    tile_sums_used = true;
  }
  other.tile_sums.clear();
  other.tile_sums_used = false;
  const auto sets_before = static_cast<std::uint32_t>(destination_sets.size());
  for (BroadcastCount b : other.broadcasts_counted) {
    b.destination_set += sets_before;
    broadcasts_counted.push_back(b);
  }
  destination_sets.insert(destination_sets.end(), std::make_move_iterator(other.destination_sets.begin()),
                          std::make_move_iterator(other.destination_sets.end()));
  other.transfers.clear();
  other.counted.clear();
  other.broadcasts_counted.clear();
  other.destination_sets.clear();
}

std::uint32_t ExchangePlan::add_destination_set(std::vector<TileId> tiles) {
  std::sort(tiles.begin(), tiles.end());
  destination_sets.push_back(std::move(tiles));
  return static_cast<std::uint32_t>(destination_sets.size() - 1);
}

}  // namespace tilesim::sim
