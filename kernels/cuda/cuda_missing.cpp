// The cuda backend in a build without nvcc (or the sanitizer build, which leaves CUDA out): it says so.
#include "common/error.hpp"
#include "kernels/cuda/cuda_backend.hpp"

namespace tilesim::kernels::cuda {

bool built_in() { return false; }

std::string description() { return "not built: CMake found no nvcc, or this is the sanitizer build"; }

DeviceProbe probe_device() { return {false, description()}; }

std::unique_ptr<Backend> make_backend(CudaTiming) {
  throw InputError(
      "backend cuda: this tilesim was built without its CUDA kernels (CMake found no nvcc, or this is the sanitizer build, "
      "which leaves CUDA out; install the CUDA toolkit so that nvcc is on PATH or at /usr/local/cuda/bin, and rebuild without "
      "TILESIM_SANITIZE). For modeled GPU times use gpu-model:MACHINE");
}

}  // namespace tilesim::kernels::cuda
