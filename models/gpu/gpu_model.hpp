#pragma once
// Analytic GPU model: predicted seconds for gather/scatter ops on an NVIDIA GPU described by a machine
// file (models/gpu/machines/*.json). Every prediction is "modeled" and names its mode:
//   kernel: device time of the kernels alone (what CUDA events around the kernels would measure);
//   eager:  one eager PyTorch call per op, what torch.utils.benchmark measures: a host floor per op
//           kind (Python, dispatcher, launch) overlapping with, or followed by, the kernel time.
// Structure: roofline plus overheads (bytes at each level / bandwidth, FLOPs / peak, atomics /
// atomic throughput, launch latency), never a regression on sizes.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/op_graph.hpp"

namespace tilesim::gpu {

enum class GpuOp { gather, scatter_add, scatter_max, scatter_min, zero_fill };
std::string to_string(GpuOp op);

enum class GpuMode { kernel, eager };
std::string to_string(GpuMode mode);

struct GpuMachine;  // defined in gpu_machine.hpp

struct GpuPrediction {
  double time_s = 0;        // what the mode reports
  double kernel_s = 0;      // device time of the kernels
  double host_floor_s = 0;  // eager only: the per-call host floor of this op kind
  std::string limiter;      // what bounds the kernel time: "dram", "atomics", "launch", ...
  nlohmann::json to_json() const;
};

// `shape` uses the hydronet naming of ir/op_graph.hpp (scatter_max/min as scatter_add; zero_fill fills
// num_outputs x num_features).
GpuPrediction predict(GpuOp op, const OpShape& shape, DType dtype, const GpuMachine& machine, GpuMode mode);

}  // namespace tilesim::gpu
