// Whether a machine configuration can be simulated (validate_config, sim/compiled_program.hpp): every
// figure in range and, on several chips, every route between them arriving over links that exist.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "sim/compiled_program.hpp"
#include "sim/compiled_program_phase.hpp"

namespace tilesim::sim {

void validate_config(const MachineConfig& config, std::int32_t tile_slots) {
  using compile::str;
  const std::string machine = "machine " + config.name + ": ";
  if (config.num_tiles < 1 || config.num_tiles > tile_slots) {
    throw std::logic_error(machine + "num_tiles is " + str(config.num_tiles) + "; the engine was elaborated with " +
                           str(tile_slots) + " tile slots (Engine::instance), so 1 to " + str(tile_slots) +
                           " tiles can be simulated");
  }
  if (!(config.clock_hz > 0) || !std::isfinite(config.clock_hz)) {
    throw std::logic_error(machine + "clock_hz must be positive, is " + std::to_string(config.clock_hz));
  }
  if (config.sram_bytes_per_tile < 0) throw std::logic_error(machine + "sram_bytes_per_tile is negative");
  if (config.worker_contexts < 1) {
    throw std::logic_error(machine + "worker_contexts must be at least 1, is " + str(config.worker_contexts));
  }
  if (config.tiles_per_supertile < 1) {
    throw std::logic_error(machine + "tiles_per_supertile must be at least 1, is " + str(config.tiles_per_supertile));
  }
  if (!(config.exchange_bytes_per_cycle > 0) || !std::isfinite(config.exchange_bytes_per_cycle)) {
    throw std::logic_error(machine + "exchange_bytes_per_cycle must be positive, is " +
                           std::to_string(config.exchange_bytes_per_cycle));
  }
  if (config.sync_cycles < 0 || config.exchange_fixed_cycles < 0 || config.compute_fixed_cycles < 0 ||
      config.exchange_cycles_per_region < 0) {
    throw std::logic_error(machine +
                           "sync_cycles, exchange_fixed_cycles, compute_fixed_cycles and exchange_cycles_per_region must not be negative");
  }
  if (config.tiles_per_chip < 0 || (config.tiles_per_chip > 0 && config.num_tiles % config.tiles_per_chip != 0)) {
    throw std::logic_error(machine + "tiles_per_chip (" + str(config.tiles_per_chip) + ") must be 0 or divide num_tiles (" +
                           str(config.num_tiles) + ")");
  }
  const std::int32_t chips = config.num_chips();
  if (chips > 1) {
    if (config.routes.size() != static_cast<std::size_t>(chips) * static_cast<std::size_t>(chips)) {
      throw std::logic_error(machine + "routes must hold num_chips^2 = " + str(std::int64_t{chips} * chips) + " entries, holds " +
                             str(static_cast<std::int64_t>(config.routes.size())));
    }
    for (const auto& link : config.links) {
      if (!(link.bytes_per_cycle > 0) || !std::isfinite(link.bytes_per_cycle) || link.from_chip < 0 ||
          link.from_chip >= chips || link.to_chip < 0 || link.to_chip >= chips) {
        throw std::logic_error(machine + "a link from chip " + str(link.from_chip) + " to chip " + str(link.to_chip) +
                               " is outside the machine or has no bandwidth");
      }
    }
    for (std::int32_t from = 0; from < chips; ++from) {
      for (std::int32_t to = 0; to < chips; ++to) {
        const auto& r = config.routes[static_cast<std::size_t>(from * chips + to)];
        std::int32_t at = from;
        for (std::int32_t link : r) {
          if (link < 0 || static_cast<std::size_t>(link) >= config.links.size() ||
              config.links[static_cast<std::size_t>(link)].from_chip != at) {
            throw std::logic_error(machine + "the route from chip " + str(from) + " to chip " + str(to) + " is broken");
          }
          at = config.links[static_cast<std::size_t>(link)].to_chip;
        }
        if (at != to || (from != to && r.empty())) {
          throw std::logic_error(machine + "the route from chip " + str(from) + " to chip " + str(to) + " does not arrive");
        }
      }
    }
  }
  if (config.link_latency_cycles < 0 || config.cross_chip_sync_cycles < 0) {
    throw std::logic_error(machine + "link_latency_cycles and cross_chip_sync_cycles must not be negative");
  }
}

}  // namespace tilesim::sim
