#include "backends/machine_listings.hpp"

#include <iomanip>
#include <sstream>

#include "models/gpu/gpu_machine.hpp"
#include "models/ipu/machine/machine_file.hpp"

namespace tilesim::backends {

nlohmann::json ipu_machine_summaries() {
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
                    {"exchange_bytes_per_s_total", c.exchange_bytes_per_cycle * c.num_tiles * c.clock_hz},
                    {"num_ipus", m.system.num_ipus}});
    if (m.system.num_ipus > 1) {
      // A system: its IPU-Links (one direction, after efficiency) and what crossing them costs.
      list.back()["chip_file"] = m.system.chip_file;
      list.back()["tiles_per_ipu"] = c.tiles_per_chip;
      list.back()["link_bytes_per_s"] = m.system.link_bytes_per_cycle * c.clock_hz;
      list.back()["links_to_pair"] = m.system.links_to_pair;
      list.back()["links_up_down"] = m.system.links_up_down;
      list.back()["links_cross_rung"] = m.system.links_cross_rung;
      list.back()["link_latency_cycles"] = c.link_latency_cycles;
      list.back()["global_sync_cycles"] = c.cross_chip_sync_cycles;
    }
  }
  return list;
}

std::string ipu_machine_table(const nlohmann::json& list) {
  std::ostringstream out;
  out << std::left << std::setw(14) << "backend" << std::right << std::setw(7) << "tiles" << std::setw(10) << "clock"
      << std::setw(14) << "SRAM/tile" << std::setw(12) << "SRAM total" << std::setw(9) << "workers" << std::setw(14)
      << "exchange" << "  file\n";
  for (const auto& m : list) {
    std::ostringstream clock, sram, total, exch;
    clock << std::fixed << std::setprecision(2) << m["tile_clock_hz"].get<double>() / 1e9 << " GHz";
    sram << m["sram_bytes_per_tile"].get<std::int64_t>() / 1024 << " KiB";
    total << std::fixed << std::setprecision(0) << m["sram_bytes_total"].get<double>() / (1024.0 * 1024.0) << " MiB";
    exch << std::fixed << std::setprecision(1) << m["exchange_bytes_per_s_total"].get<double>() / 1e12 << " TB/s";
    out << std::left << std::setw(14) << m["backend"].get<std::string>() << std::right << std::setw(7)
        << m["num_tiles"].get<int>() << std::setw(10) << clock.str() << std::setw(14) << sram.str() << std::setw(12)
        << total.str() << std::setw(9) << m["worker_contexts"].get<int>() << std::setw(14) << exch.str() << "  "
        << m["file"].get<std::string>() << "\n";
  }
  for (const auto& m : list) {
    if (m["num_ipus"].get<int>() < 2) continue;
    std::ostringstream link;
    link << std::fixed << std::setprecision(1) << m["link_bytes_per_s"].get<double>() / 1e9;
    out << "  " << m["backend"].get<std::string>() << ": " << m["num_ipus"].get<int>() << " IPUs of "
        << m["tiles_per_ipu"].get<int>() << " tiles in a ladder, IPU-Links " << link.str()
        << " GB/s each way per link (" << m["links_to_pair"].get<int>() << " to the pair, "
        << m["links_up_down"].get<int>() << " up/down, " << m["links_cross_rung"].get<int>() << " cross-rung), "
        << m["link_latency_cycles"].get<int>() << " cycles per hop, global sync +"
        << m["global_sync_cycles"].get<int>() << " cycles\n";
  }
  return out.str();
}

nlohmann::json gpu_machine_summaries() {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& name : gpu::shipped_gpu_machines()) {
    const auto g = gpu::load_gpu_machine(name);
    const auto& c = g.calibration;
    gpus.push_back({{"name", g.name},
                    {"kind", "gpu-model"},
                    {"backend", "gpu-model:" + name},
                    {"description", g.description},
                    {"file", g.file},
                    {"sm_count", g.sm_count},
                    {"sm_clock_hz", g.sm_clock_hz},
                    {"hbm_bytes_per_s", g.hbm_bytes_per_s},
                    {"l2_bytes", g.l2_bytes},
                    {"fp32_flops_per_s", g.fp32_flops_per_s},
                    {"gather_elements_per_s", c.gather_elements_per_sm_cycle * g.sm_cycles_per_s()},
                    {"atomic_add_elements_per_s", c.atomic_add_elements_per_sm_cycle * g.sm_cycles_per_s()},
                    {"launch_latency_s", c.launch_latency_s},
                    {"fit_carried_over_from", g.fit_carried_over_from}});
  }
  return gpus;
}

std::string gpu_machine_table(const nlohmann::json& gpus) {
  if (gpus.empty()) return "";
  // Modeled GPUs: add ":eager" to the backend name for one eager PyTorch call per op.
  std::ostringstream out;
  out << "\n" << std::left << std::setw(22) << "backend" << std::right << std::setw(5) << "SMs" << std::setw(10)
      << "clock" << std::setw(11) << "HBM" << std::setw(9) << "L2" << std::setw(12) << "FP32" << "  fitted on\n";
  for (const auto& g : gpus) {
    std::ostringstream clock, hbm, l2, fp32;
    clock << std::fixed << std::setprecision(2) << g["sm_clock_hz"].get<double>() / 1e9 << " GHz";
    hbm << std::fixed << std::setprecision(3) << g["hbm_bytes_per_s"].get<double>() / 1e12 << " TB/s";
    l2 << g["l2_bytes"].get<std::int64_t>() / (1024 * 1024) << " MiB";
    fp32 << std::fixed << std::setprecision(1) << g["fp32_flops_per_s"].get<double>() / 1e12 << " TF/s";
    const std::string from = g["fit_carried_over_from"].get<std::string>();
    out << std::left << std::setw(22) << g["backend"].get<std::string>() << std::right << std::setw(5)
        << g["sm_count"].get<int>() << std::setw(10) << clock.str() << std::setw(11) << hbm.str() << std::setw(9)
        << l2.str() << std::setw(12) << fp32.str() << "  " << (from.empty() ? "own data" : from) << "\n";
  }
  return out.str();
}

}  // namespace tilesim::backends
