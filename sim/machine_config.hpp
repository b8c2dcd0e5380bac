#pragma once
// The parameters of a generic BSP tile machine. The engine knows nothing of IPUs: a model fills
// this from its machine file (models/ipu/machine/machine_file.cpp), where each figure cites its source.
#include <cstdint>
#include <string>
#include <vector>

namespace tilesim::sim {

using Cycles = std::int64_t;  // tile clock cycles
using TileId = std::int32_t;

// A group of links carrying traffic from one chip to another (one direction).
struct ChipLink {
  std::int32_t from_chip = 0;
  std::int32_t to_chip = 0;
  double bytes_per_cycle = 0;  // all links of the group together, one direction
  // Latency of crossing this group; negative: the machine's link_latency_cycles (a system whose groups
  // are of one kind leaves it so; one joining IPU-Links and gateway links sets the gateway groups').
  Cycles latency_cycles = -1;
};

struct MachineConfig {
  std::string name;
  std::int32_t num_tiles = 0;
  double clock_hz = 0;
  std::int64_t sram_bytes_per_tile = 0;     // capacity of one tile's SRAM arena, enforced on load
  std::int32_t worker_contexts = 0;         // barrel-scheduled worker threads per tile
  std::int32_t tiles_per_supertile = 1;     // tiles sharing one exchange bus
  double exchange_bytes_per_cycle = 0;      // per tile, for sending and for receiving
  Cycles sync_cycles = 0;                   // one on-chip barrier (every superstep ends with one)
  Cycles exchange_fixed_cycles = 0;         // fixed cost of a non-empty exchange phase
  Cycles exchange_cycles_per_region = 0;    // per contiguous region a tile sends or receives in an exchange
  Cycles compute_fixed_cycles = 0;          // fixed cost of a non-empty compute phase (compute-set launch)

  // Several chips joined by links. tiles_per_chip == 0 means one chip (every figure above is per chip);
  // otherwise global tile t lies on chip t / tiles_per_chip.
  std::int32_t tiles_per_chip = 0;
  std::vector<ChipLink> links;                    // directed link groups between chips
  std::vector<std::vector<std::int32_t>> routes;  // [from * num_chips() + to]: indices into links, in order
  Cycles link_latency_cycles = 0;                 // per link group a transfer crosses
  Cycles cross_chip_sync_cycles = 0;              // added to the sync before an exchange that crosses chips

  std::int32_t num_chips() const { return tiles_per_chip > 0 ? num_tiles / tiles_per_chip : 1; }
  std::int32_t chip_of(TileId tile) const { return tiles_per_chip > 0 ? tile / tiles_per_chip : 0; }

  double seconds(Cycles cycles) const { return static_cast<double>(cycles) / clock_hz; }
};

}  // namespace tilesim::sim
