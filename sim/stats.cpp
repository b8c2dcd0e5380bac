#include "sim/stats.hpp"

#include <stdexcept>

namespace tilesim::sim {

std::string to_string(PhaseKind kind) {
  switch (kind) {
    case PhaseKind::compute:
      return "compute";
    case PhaseKind::sync:
      return "sync";
    case PhaseKind::exchange:
      return "exchange";
  }
  throw std::logic_error("unknown PhaseKind " + std::to_string(static_cast<int>(kind)));
}

nlohmann::json RunStats::to_json() const {
  nlohmann::json phase_rows = nlohmann::json::array();
  for (const auto& p : phases) {
    phase_rows.push_back({
        {"name", p.name},
        {"kind", to_string(p.kind)},
        {"start_cycle", p.start_cycle},
        {"cycles", p.cycles},
        {"slowest_tile", p.slowest_tile},
        {"active_tiles", p.active_tiles},
        {"bytes", p.bytes},
    });
  }
  return {
      {"program", program},
      {"total_cycles", total_cycles},
      {"compute_cycles", compute_cycles},
      {"sync_cycles", sync_cycles},
      {"exchange_cycles", exchange_cycles},
      {"exchange_bytes_sent", exchange_bytes_sent},
      {"exchange_bytes_received", exchange_bytes_received},
      {"peak_tile_bytes", peak_tile_bytes},
      {"peak_tile", peak_tile},
      {"vertices", vertices},
      {"supersteps", supersteps},
      {"wall_s", wall_s},
      {"simulated_cycles_per_s", simulated_cycles_per_s},
      {"phases", std::move(phase_rows)},
  };
}

}  // namespace tilesim::sim
