#include "backends/machine_ceilings.hpp"

#include <filesystem>

#include "analysis/roofline.hpp"  // ipu_supplement_ceilings: the IPU figures its machine files do not carry
#include "backends/registry.hpp"
#include "common/error.hpp"
#include "models/cpu/cpu_machine.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/ipu/machine/machine_file.hpp"

namespace tilesim::backends {

namespace {

// The source text of a figure in a machine document ({"value": ..., "source": ...} at section.key).
std::string source_of(const nlohmann::json& document, const std::string& section, const std::string& key) {
  if (document.contains(section) && document[section].contains(key) && document[section][key].contains("source"))
    return document[section][key]["source"].get<std::string>();
  return "";
}

Ceiling bandwidth(const std::string& level, const std::string& label, double value, const std::string& source,
                  bool secondary = false) {
  Ceiling c;
  c.compute = false;
  c.name = level;
  c.label = label;
  c.value = value;
  c.source = source;
  c.secondary = secondary;
  return c;
}

Ceiling compute(const std::string& dtype, const std::string& label, double value, const std::string& source) {
  Ceiling c;
  c.compute = true;
  c.name = dtype;
  c.label = label;
  c.value = value;
  c.source = source;
  return c;
}

}  // namespace

std::string default_cpu_machine_file() { return "out/calibration/cpu.json"; }

RooflineMachine roofline_machine(const std::string& backend, const std::string& machine) {
  const BackendSpec spec = parse_backend_list(backend).front();
  return spec.descriptor->ceilings(spec, backend, machine);
}

// The IPU's ceilings: the exchange and the AMP fp32 peak derived from the machine file, the rest from
// analysis/ipu_roofline_ceilings.json.
RooflineMachine ipu_ceilings(const BackendSpec& spec, const std::string& backend, const std::string& machine) {
  RooflineMachine m;
  m.backend = backend;
  {
    const ipu::IpuMachine ipu = ipu::load_ipu_machine(machine.empty() ? spec.machine : machine);
    const auto& c = ipu.chip;
    m.title = display_label("ipu:" + c.name, "simulated", "").value();
    m.files.push_back(ipu.file);
    m.ceilings.push_back(bandwidth("exchange", "exchange",
                                   static_cast<double>(c.num_tiles) * c.exchange_bytes_per_cycle * c.clock_hz,
                                   "derived from " + ipu.file + ": chip.num_tiles x chip.exchange_bytes_per_cycle x "
                                   "chip.tile_clock_hz (receive rate of all tiles at once)"));
    m.ceilings.push_back(compute("float32", "fp32 (AMP)",
                                 static_cast<double>(c.num_tiles) *
                                     static_cast<double>(ipu.codelets.amp_float32_flops_per_tile_cycle) * c.clock_hz,
                                 "derived from " + ipu.file + ": chip.num_tiles x codelets.amp_float32_flops_per_tile_cycle x "
                                 "chip.tile_clock_hz (the AMP units' fp32 rate the simulated matmuls run at)"));
    const auto supplement = analysis::ipu_supplement_ceilings(c.name);
    if (supplement.empty())
      m.notes.push_back("no tile-SRAM or peak-FLOP/s figures for IPU machine \"" + c.name + "\" in " +
                        analysis::ipu_roofline_ceilings_file() + ": only the exchange ceiling is drawn");
    else
      m.files.push_back(analysis::ipu_roofline_ceilings_file());
    for (const auto& s : supplement) m.ceilings.push_back(s);
    return m;
  }
}

RooflineMachine gpu_model_ceilings(const BackendSpec& spec, const std::string& backend, const std::string& machine) {
  RooflineMachine m;
  m.backend = backend;
  const gpu::GpuMachine g = gpu::load_gpu_machine(machine.empty() ? spec.machine : machine);
  m.title = display_label(backend, "modeled", spec.mode).value();
  m.files.push_back(g.file);
  const auto& d = g.document;
  m.ceilings.push_back(bandwidth("hbm", "HBM", g.hbm_bytes_per_s, source_of(d, "chip", "hbm_bytes_per_s")));
  m.ceilings.push_back(bandwidth("l2", "L2", g.l2_bytes_per_s, source_of(d, "chip", "l2_bytes_per_s")));
  m.ceilings.push_back(compute("float32", "fp32", g.fp32_flops_per_s, source_of(d, "peak_flops_per_s", "fp32")));
  m.ceilings.push_back(compute("tf32", "tf32 (tensor)", g.tf32_flops_per_s, source_of(d, "peak_flops_per_s", "tf32")));
  if (spec.mode == "eager")
    m.notes.push_back("eager mode: each time includes the per-call host floor, so small points sit far below the ceilings");
  return m;
}

RooflineMachine host_cpu_ceilings(const std::string& backend, const std::string& machine, const std::string& what) {
  RooflineMachine m;
  m.backend = backend;
  // kernels measured on this host, under this host's ceilings
  std::string file = machine;
  if (file.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(default_cpu_machine_file(), ec)) {
      m.title = what + " (measured)";
      m.notes.push_back("no CPU machine file: run `tilesim calibrate` (writes " + default_cpu_machine_file() +
                        ") or pass --machine cpu:FILE; the CPU points are drawn without ceilings");
      return m;
    }
    file = default_cpu_machine_file();
  }
  const cpu_model::CpuMachine c = cpu_model::load_cpu_machine(file);
  m.title = what + ", " + c.cpu_model + " (measured)";
  m.files.push_back(c.file);
  m.ceilings.push_back(bandwidth("dram", "DRAM stream", c.dram_stream_bytes_per_s.value, c.dram_stream_bytes_per_s.source));
  m.ceilings.push_back(bandwidth("dram", "DRAM random gather", c.dram_random_gather_bytes_per_s.value,
                                 c.dram_random_gather_bytes_per_s.source, true));
  for (const auto& [dtype, f] : c.peak_flops_per_s)
    m.ceilings.push_back(compute(dtype, dtype == "float32" ? "fp32" : (dtype == "float64" ? "fp64" : dtype), f.value, f.source));
  return m;
}

}  // namespace tilesim::backends
