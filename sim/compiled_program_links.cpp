// Transfers between chips in an exchange phase (compiled_program_links.hpp).
#include "sim/compiled_program_links.hpp"

#include <algorithm>
#include <cmath>

namespace tilesim::sim::compile {

LinkTiming::LinkTiming(const MachineConfig& config, const ProgramBuffers& buffers)
    : config_(config), buffers_(buffers) {
  arrival_cycles_.assign(static_cast<std::size_t>(config.num_tiles), 0);
  link_bytes_.assign(config.links.size(), 0);
}

bool LinkTiming::add(const ExchangePlan& plan) {
  if (config_.num_chips() < 2) return false;
  if (!route_bytes(plan)) return false;
  for (const Transfer& transfer : plan.transfers) add_arrivals(transfer);
  for (const TransferCount& count : plan.counted) add_count_arrivals(count);
  for (const BroadcastCount& count : plan.broadcasts_counted)
    add_broadcast_arrivals(count.src_tile, plan.destination_sets[count.destination_set]);
  return true;
}

// Counts every crossing transfer's bytes on each link group of its route; whether any crosses.
bool LinkTiming::route_bytes(const ExchangePlan& plan) {
  std::fill(link_bytes_.begin(), link_bytes_.end(), 0);
  bool crosses = false;
  for (const Transfer& transfer : plan.transfers) {
    const std::int32_t src_chip = config_.chip_of(buffers_.tile_of(transfer.src.buffer));
    for (std::int32_t chip : remote_chips_of(buffers_.tile_of(transfer.src.buffer), destination_tiles(transfer))) {
      crosses = true;
      for (std::int32_t link : route(src_chip, chip)) link_bytes_[static_cast<std::size_t>(link)] += transfer.total_bytes();
    }
  }
  for (const TransferCount& count : plan.counted) {
    const std::int32_t src_chip = config_.chip_of(count.src_tile);
    const std::int32_t dst_chip = config_.chip_of(count.dst_tile);
    if (src_chip == dst_chip) continue;
    crosses = true;
    for (std::int32_t link : route(src_chip, dst_chip)) link_bytes_[static_cast<std::size_t>(link)] += count.bytes;
  }
  for (const BroadcastCount& count : plan.broadcasts_counted) {
    const std::int32_t src_chip = config_.chip_of(count.src_tile);
    for (std::int32_t chip : remote_chips_of(count.src_tile, plan.destination_sets[count.destination_set])) {
      crosses = true;
      for (std::int32_t link : route(src_chip, chip)) link_bytes_[static_cast<std::size_t>(link)] += count.bytes;
    }
  }
  return crosses;
}

// The source tile, and the destination tiles on each remote chip, wait for the crossing to that chip (a
// broadcast crosses each link group once and fans out on the far chip).
void LinkTiming::add_broadcast_arrivals(TileId src_tile, const std::vector<TileId>& destinations) {
  const std::int32_t src_chip = config_.chip_of(src_tile);
  for (std::int32_t chip : remote_chips_of(src_tile, destinations)) {
    const Cycles cycles = crossing_cycles(src_chip, chip);
    auto& src_cycles = arrival_cycles_[static_cast<std::size_t>(src_tile)];
    src_cycles = std::max(src_cycles, cycles);
    for (TileId tile : destinations) {
      if (config_.chip_of(tile) != chip) continue;
      auto& dst_cycles = arrival_cycles_[static_cast<std::size_t>(tile)];
      dst_cycles = std::max(dst_cycles, cycles);
    }
  }
}

const std::vector<std::int32_t>& LinkTiming::remote_chips_of(TileId src_tile, const std::vector<TileId>& destinations) {
  remote_chips_.clear();
  const std::int32_t src_chip = config_.chip_of(src_tile);
  for (TileId tile : destinations) {
    const std::int32_t chip = config_.chip_of(tile);
    if (chip != src_chip && std::find(remote_chips_.begin(), remote_chips_.end(), chip) == remote_chips_.end()) {
      remote_chips_.push_back(chip);
    }
  }
  return remote_chips_;
}

void LinkTiming::add_count_arrivals(const TransferCount& count) {
  const std::int32_t src_chip = config_.chip_of(count.src_tile);
  const std::int32_t dst_chip = config_.chip_of(count.dst_tile);
  if (src_chip == dst_chip) return;
  const Cycles cycles = crossing_cycles(src_chip, dst_chip);
  for (TileId tile : {count.src_tile, count.dst_tile}) {
    auto& arrival = arrival_cycles_[static_cast<std::size_t>(tile)];
    arrival = std::max(arrival, cycles);
  }
}

// The transfer's source tile, and its destination tiles on each remote chip, wait for its crossing to
// that chip.
void LinkTiming::add_arrivals(const Transfer& transfer) {
  add_broadcast_arrivals(buffers_.tile_of(transfer.src.buffer), destination_tiles(transfer));
}

// The busiest group's cycles for the phase's bytes over it, plus every group's latency on the route.
Cycles LinkTiming::crossing_cycles(std::int32_t from_chip, std::int32_t to_chip) const {
  Cycles busiest = 0;
  Cycles latency = 0;
  for (std::int32_t link : route(from_chip, to_chip)) {
    const auto l = static_cast<std::size_t>(link);
    busiest = std::max(busiest, static_cast<Cycles>(std::ceil(static_cast<double>(link_bytes_[l]) /
                                                              config_.links[l].bytes_per_cycle)));
    const Cycles own = config_.links[l].latency_cycles;
    latency += own >= 0 ? own : config_.link_latency_cycles;
  }
  return busiest + latency;
}

// The tiles of a transfer's destinations, in its order (scratch, valid until the next call).
const std::vector<TileId>& LinkTiming::destination_tiles(const Transfer& transfer) {
  destination_tiles_.clear();
  for (const auto& ref : transfer.dst) destination_tiles_.push_back(buffers_.tile_of(ref.buffer));
  return destination_tiles_;
}

}  // namespace tilesim::sim::compile
