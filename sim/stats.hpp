#pragma once
// What a run of a Program on the engine measured. Units are in the names.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/machine_config.hpp"

namespace tilesim::sim {

enum class PhaseKind { compute, sync, exchange };
std::string to_string(PhaseKind kind);

struct PhaseStats {
  std::string name;           // superstep name
  PhaseKind kind = PhaseKind::compute;
  Cycles start_cycle = 0;     // relative to the start of the program
  Cycles cycles = 0;          // length of the phase (slowest tile plus fixed cost)
  TileId slowest_tile = -1;
  std::int32_t active_tiles = 0;   // tiles with work (vertices, or bytes sent or received)
  std::int64_t bytes = 0;          // exchange: bytes received over all tiles
};

struct RunStats {
  std::string program;
  Cycles total_cycles = 0;
  Cycles compute_cycles = 0;
  Cycles sync_cycles = 0;
  Cycles exchange_cycles = 0;
  std::int64_t exchange_bytes_sent = 0;      // bytes leaving tiles (a broadcast counts once)
  std::int64_t exchange_bytes_received = 0;  // bytes arriving at tiles (a broadcast counts per receiver)
  std::int64_t peak_tile_bytes = 0;          // largest SRAM use of any tile
  TileId peak_tile = -1;
  std::int64_t vertices = 0;
  std::int32_t supersteps = 0;
  std::vector<PhaseStats> phases;
  double wall_s = 0;                         // host time the engine spent running the program
  double simulated_cycles_per_s = 0;         // total_cycles / wall_s

  nlohmann::json to_json() const;
};

}  // namespace tilesim::sim
