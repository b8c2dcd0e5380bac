// tilesim machines: the shipped machine files and their key figures.
#include <iomanip>
#include <iostream>

#include "apps/commands.hpp"
#include "models/ipu/machine_file.hpp"

namespace tilesim::cli {

int machines_command(bool json) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& name : ipu::shipped_ipu_machines()) {
    const auto m = ipu::load_ipu_machine(name);
    const auto& c = m.chip;
    list.push_back({{"name", c.name},
                    {"kind", "ipu"},
                    {"backend", "ipu:" + name},
                    {"description", m.description},
                    {"file", m.file},
                    {"num_tiles", c.num_tiles},
                    {"tile_clock_hz", c.clock_hz},
                    {"sram_bytes_per_tile", c.sram_bytes_per_tile},
                    {"sram_bytes_total", c.sram_bytes_per_tile * c.num_tiles},
                    {"worker_contexts", c.worker_contexts},
                    {"exchange_bytes_per_cycle", c.exchange_bytes_per_cycle},
                    {"exchange_bytes_per_s_total", c.exchange_bytes_per_cycle * c.num_tiles * c.clock_hz}});
  }
  if (json) {
    std::cout << list.dump(2) << std::endl;
    return 0;
  }
  std::cout << std::left << std::setw(12) << "backend" << std::right << std::setw(7) << "tiles" << std::setw(10) << "clock"
            << std::setw(14) << "SRAM/tile" << std::setw(12) << "SRAM total" << std::setw(9) << "workers" << std::setw(14)
            << "exchange" << "  file\n";
  for (const auto& m : list) {
    std::ostringstream clock, sram, total, exch;
    clock << std::fixed << std::setprecision(2) << m["tile_clock_hz"].get<double>() / 1e9 << " GHz";
    sram << m["sram_bytes_per_tile"].get<std::int64_t>() / 1024 << " KiB";
    total << std::fixed << std::setprecision(0) << m["sram_bytes_total"].get<double>() / (1024.0 * 1024.0) << " MiB";
    exch << std::fixed << std::setprecision(1) << m["exchange_bytes_per_s_total"].get<double>() / 1e12 << " TB/s";
    std::cout << std::left << std::setw(12) << m["backend"].get<std::string>() << std::right << std::setw(7)
              << m["num_tiles"].get<int>() << std::setw(10) << clock.str() << std::setw(14) << sram.str() << std::setw(12)
              << total.str() << std::setw(9) << m["worker_contexts"].get<int>() << std::setw(14) << exch.str() << "  "
              << m["file"].get<std::string>() << "\n";
  }
  std::cout << std::left << std::setw(12) << "cpu" << "this host's cores (measured, OpenMP)\n";
  return 0;
}

}  // namespace tilesim::cli
