#pragma once
// An exchange's transfers between chips: the link groups each crosses on its route
// (MachineConfig::routes), the phase's bytes routed over each group, and when each tile's slowest
// crossing arrives. Engine-internal.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/compiled_program_buffers.hpp"
#include "sim/machine_config.hpp"
#include "sim/program.hpp"

namespace tilesim::sim::compile {

class LinkTiming {
 public:
  LinkTiming(const MachineConfig& config, const ProgramBuffers& buffers);

  // Transfers between chips share the link groups they cross: each group moves all the phase's bytes
  // routed over it at its rate, so a crossing transfer lasts as long as its busiest group takes, plus
  // the latency of every group on its route. Its source and destination tiles cannot finish the phase
  // before it arrives. Returns whether any transfer crosses chips.
  bool add(const ExchangePlan& plan);

  // When the tile's slowest transfer across chips arrives in this phase; 0 when none.
  Cycles arrival_cycles(TileId tile) const { return arrival_cycles_[static_cast<std::size_t>(tile)]; }
  void reset(TileId tile) { arrival_cycles_[static_cast<std::size_t>(tile)] = 0; }

 private:
  bool route_bytes(const ExchangePlan& plan);
  void add_arrivals(const Transfer& transfer);
  void add_count_arrivals(const TransferCount& count);
  void add_broadcast_arrivals(TileId src_tile, const std::vector<TileId>& destinations);
  // The distinct chips other than the source tile's that `destinations` lie on.
  const std::vector<std::int32_t>& remote_chips_of(TileId src_tile, const std::vector<TileId>& destinations);
  Cycles crossing_cycles(std::int32_t from_chip, std::int32_t to_chip) const;
  const std::vector<TileId>& destination_tiles(const Transfer& transfer);
  const std::vector<std::int32_t>& route(std::int32_t from_chip, std::int32_t to_chip) const {
    return config_.routes[static_cast<std::size_t>(from_chip * config_.num_chips() + to_chip)];
  }

  const MachineConfig& config_;
  const ProgramBuffers& buffers_;
  std::vector<Cycles> arrival_cycles_;     // per tile: when its slowest transfer across chips arrives
  std::vector<std::int64_t> link_bytes_;   // per link group: bytes routed over it in this phase
  std::vector<std::int32_t> remote_chips_;
  std::vector<TileId> destination_tiles_;
};

}  // namespace tilesim::sim::compile
