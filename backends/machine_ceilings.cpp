#include "backends/machine_ceilings.hpp"

#include <filesystem>

#include "backends/registry.hpp"
#include "common/error.hpp"
#include "models/cpu/cpu_machine.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/ipu/machine/machine_file.hpp"

namespace tilesim::backends {

Ceiling bandwidth(const std::string& level, const std::string& label, double value, const std::string& source,
                  bool secondary) {
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

std::string default_cpu_machine_file() { return "out/calibration/cpu.json"; }

RooflineMachine roofline_machine(const std::string& backend, const std::string& machine) {
  const BackendSpec spec = parse_backend_list(backend).front();
  return spec.descriptor->ceilings(spec, backend, machine);
}

// The IPU's ceilings: the exchange and the AMP fp32 peak derived from the machine file, tile SRAM and the
// fp16 peak from its roofline section.
RooflineMachine ipu_ceilings(const BackendSpec& spec, const std::string& backend, const std::string& machine) {
  RooflineMachine m;
  m.backend = backend;
  {
    const ipu::IpuMachine ipu = ipu::load_ipu_machine(machine.empty() ? spec.machine : machine);
    const auto& c = ipu.chip;
    m.title = display_label("ipu:" + c.name, "simulated", "").value();
    m.files = ipu.provenance.files();  // the machine file, then those it inherits from (chip file, base)
    m.ceilings.push_back(bandwidth("exchange", "exchange",
                                   static_cast<double>(c.num_tiles) * c.exchange_bytes_per_cycle * c.clock_hz,
                                   "derived from " + ipu.file + ": chip.num_tiles x chip.exchange_bytes_per_cycle x "
                                   "chip.tile_clock_hz (receive rate of all tiles at once)"));
    m.ceilings.push_back(compute("float32", "fp32 (AMP)",
                                 static_cast<double>(c.num_tiles) *
                                     static_cast<double>(ipu.float32_codelets.amp_flops_per_tile_cycle) * c.clock_hz,
                                 "derived from " + ipu.file + ": chip.num_tiles x codelets.amp_float32_flops_per_tile_cycle x "
                                 "chip.tile_clock_hz (the AMP units' fp32 rate the simulated matmuls run at)"));
    // The figures the simulator does not use, from the machine file's roofline section (or its base's).
    const auto& roofline = ipu.roofline;
    auto sourced = [&](const std::string& path) {
      const MachineFigure& f = ipu.provenance.figure(path);
      return f.source + " [" + f.file + "]";
    };
    if (roofline.tile_sram_bytes_per_s > 0)
      m.ceilings.push_back(bandwidth("tile_sram", "tile SRAM", roofline.tile_sram_bytes_per_s,
                                     sourced("roofline.tile_sram_bytes_per_s")));
    for (const auto& [dtype, flops_per_s] : roofline.peak_flops_per_s)  // float16 only (the format's one dtype)
      m.ceilings.push_back(compute(dtype, "fp16 (AMP)", flops_per_s, sourced("roofline.peak_flops_per_s." + dtype)));
    if (roofline.tile_sram_bytes_per_s <= 0 && roofline.peak_flops_per_s.empty())
      m.notes.push_back("no tile-SRAM or peak-FLOP/s figures for IPU machine \"" + c.name + "\" in " + ipu.file +
                        " (section roofline): only the exchange ceiling is drawn");
    return m;
  }
}

RooflineMachine gpu_model_ceilings(const BackendSpec& spec, const std::string& backend, const std::string& machine) {
  RooflineMachine m;
  m.backend = backend;
  const gpu::GpuMachine g = gpu::load_gpu_machine(machine.empty() ? spec.machine : machine);
  m.title = display_label(backend, "modeled", spec.mode).value();
  m.files = g.provenance.files();
  const auto source_of = [&](const std::string& path) { return g.provenance.figure(path).source; };
  m.ceilings.push_back(bandwidth("hbm", "HBM", g.hbm_bytes_per_s, source_of("chip.hbm_bytes_per_s")));
  m.ceilings.push_back(bandwidth("l2", "L2", g.l2_bytes_per_s, source_of("chip.l2_bytes_per_s")));
  m.ceilings.push_back(compute("float32", "fp32", g.fp32_flops_per_s, source_of("peak_flops_per_s.fp32")));
  m.ceilings.push_back(compute("tf32", "tf32 (tensor)", g.tf32_flops_per_s, source_of("peak_flops_per_s.tf32")));
  if (spec.mode.rfind("eager", 0) == 0)
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
  // The cache roof: an op whose bytes stay in the last-level cache (a small scatter's table and output)
  // runs above the DRAM roof, up to this one (files from `tilesim calibrate` since it was added).
  if (c.llc_stream_bytes_per_s)
    m.ceilings.push_back(bandwidth("llc", "last-level cache stream", c.llc_stream_bytes_per_s->value, c.llc_stream_bytes_per_s->source));
  for (const auto& [dtype, f] : c.peak_flops_per_s)
    m.ceilings.push_back(compute(dtype, dtype == "float32" ? "fp32" : (dtype == "float64" ? "fp64" : dtype), f.value, f.source));
  // The matmul ceilings (files from `tilesim calibrate` since they were added): a dense GEMM's rate per
  // dtype, on AMX or the BF16/FP16 instructions where the host has them.
  for (const auto& [dtype, f] : c.matmul_peak_flops_per_s)
    m.ceilings.push_back(compute(dtype, dtype + " matmul (" + f.instruction_set + ")", f.rate.value, f.rate.source));
  return m;
}

}  // namespace tilesim::backends
