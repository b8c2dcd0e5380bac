#pragma once
// The small machine the engine's own tests load: 6 workers, supertiles of 2, 4 exchange bytes per tile
// cycle, a sync of 10 and an exchange of 5 fixed cycles, with the tiles, SRAM, compute-phase cost and
// clock each test needs.
#include <cstdint>
#include <string>

#include "sim/machine_config.hpp"

namespace tilesim_test {

inline tilesim::sim::MachineConfig sim_test_machine(std::string name, std::int32_t num_tiles, std::int64_t sram_bytes_per_tile,
                                                    tilesim::sim::Cycles compute_fixed_cycles, double clock_hz = 1e9) {
  tilesim::sim::MachineConfig m;
  m.name = std::move(name);
  m.num_tiles = num_tiles;
  m.clock_hz = clock_hz;
  m.sram_bytes_per_tile = sram_bytes_per_tile;
  m.worker_contexts = 6;
  m.tiles_per_supertile = 2;
  m.exchange_bytes_per_cycle = 4;
  m.sync_cycles = 10;
  m.exchange_fixed_cycles = 5;
  m.compute_fixed_cycles = compute_fixed_cycles;
  return m;
}

}  // namespace tilesim_test
