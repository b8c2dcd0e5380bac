#pragma once
// Roofline ceilings from machine files, for `tilesim roofline`. Each family's ceilings() (registry.hpp)
// calls one of these:
//   ipu:MACHINE        exchange: num_tiles x exchange_bytes_per_cycle x tile_clock_hz, fp32 AMP peak (the
//                      machine file); tile SRAM bandwidth and fp16 peak: the machine file's roofline section
//   gpu-model:MACHINE  HBM and L2 bandwidth, peak FLOP/s per dtype (the GPU machine file)
//   cpu:FILE           streaming and random-gather DRAM bandwidth, peak FLOP/s per dtype (a CPU machine
//                      file written by `tilesim calibrate`); also for torch-cpu rows (the same host)
//   cuda               none: no machine file describes the measured device (cuda_family.cpp)
#include <string>

#include "backends/backend_spec.hpp"
#include "backends/ceilings.hpp"

namespace tilesim::backends {

// A bandwidth ceiling of memory level `level` (secondary: drawn, not the level a row is placed on) and a
// compute ceiling of `dtype`, each with the figure's source, for the families' ceilings.
Ceiling bandwidth(const std::string& level, const std::string& label, double value, const std::string& source,
                  bool secondary = false);
Ceiling compute(const std::string& dtype, const std::string& label, double value, const std::string& source);

// The default CPU machine file: where `tilesim calibrate` writes and `tilesim roofline` looks.
std::string default_cpu_machine_file();

// The ceilings for the rows of `backend` (a results.csv backend name). `machine` overrides the
// machine the backend name implies ("" to keep it): a name or file of the same family. For `cpu`
// without an override, default_cpu_machine_file() is used when it exists; otherwise the machine has no
// ceilings and a note says how to get them.
RooflineMachine roofline_machine(const std::string& backend, const std::string& machine);

// The families' ceilings. `what` names the measured kernels in the title ("CPU", "PyTorch ATen on CPU").
RooflineMachine ipu_ceilings(const BackendSpec& spec, const std::string& backend, const std::string& machine);
RooflineMachine gpu_model_ceilings(const BackendSpec& spec, const std::string& backend, const std::string& machine);
RooflineMachine host_cpu_ceilings(const std::string& backend, const std::string& machine, const std::string& what);

}  // namespace tilesim::backends
