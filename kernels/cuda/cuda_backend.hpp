#pragma once
// cuda: the measured GPU backend, running each op of the graph with tilesim's CUDA kernels on the first
// CUDA device, timed with CUDA events and verified against the reference like every backend.
// Two timing modes: `cuda` (= cuda:kernel) is device time, CUDA events around the op's kernels on
// device-resident data (the quantity gpu-model's kernel mode models); `cuda:per-call` is what a host
// program waits for per call, the host clock around the launches and the stream synchronisation
// (launch overhead included; gpu-model's eager mode). Built only when CMake finds nvcc. With no GPU, or
// without the CUDA build, make_backend() throws an InputError (exit 2) that says which, before any
// backend runs: a GPU backend that cannot measure anything has no result to report.
// No CUDA header here: the rest of tilesim compiles without the toolkit.
#include <memory>
#include <string>

#include "results/backend.hpp"

namespace tilesim::kernels::cuda {

enum class CudaTiming { kernel, per_call };

// Whether this build has the CUDA kernels (CMake found nvcc).
bool built_in();
// One line for `tilesim --version`: the CUDA version and architectures built for, or why not built.
// Does not touch the device (starting the driver can take a second).
std::string description();
// Whether a CUDA device is there: its name ("NVIDIA A100-SXM4-40GB (device 0 of 1)"), or why there is
// none ("no CUDA device present (cudaGetDeviceCount: ...)"; without the CUDA build, description()).
// Starts the driver, which can take a second.
struct DeviceProbe {
  bool present = false;
  std::string text;
};
DeviceProbe probe_device();
// The cuda backend; throws tilesim::InputError when this build has no CUDA kernels or no CUDA device is present.
std::unique_ptr<Backend> make_backend(CudaTiming timing);

}  // namespace tilesim::kernels::cuda
