#pragma once
// How the CUDA kernels hold an op's value dtype in memory. A storage policy names the element type and
// two conversions: load (an element widened to float32, the type every kernel computes in: ATen's
// "opmath" for half tensors, cuBLAS's CUBLAS_COMPUTE_32F for their products) and store (a float32
// result rounded to nearest even into the format, the one rounding a half kernel makes per output).
// The bodies (kernel_bodies.hpp, training_bodies.hpp) are templates on the policy, so one body is the
// float32, float16 and bfloat16 kernel, on the device and in the host tests' emulation alike: there the
// conversions are CUDA's intrinsics, here ir/half_float.hpp's, and both round to nearest even, so an
// emulated half body stores the bits the device would.
#include <cstdint>
#include <vector>

#include "ir/dtype.hpp"
#include "ir/half_float.hpp"
#include "kernels/cuda/host_device.hpp"

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace tilesim::kernels::cuda {

// float32: the identity conversions, so the float32 instantiation of a body is the plain float code.
struct Float32Storage {
  using type = float;
  static constexpr DType dtype = DType::float32;
  TILESIM_HD static float load(float x) { return x; }
  TILESIM_HD static float store(float x) { return x; }
};

// IEEE binary16, held as its bit pattern (CUDA's __half is not a type the host compiler knows).
struct Float16Storage {
  using type = std::uint16_t;
  static constexpr DType dtype = DType::float16;
  TILESIM_HD static float load(std::uint16_t bits) {
#ifdef __CUDA_ARCH__
    return __half2float(__ushort_as_half(bits));
#else
    return tilesim::to_float(Float16{bits});
#endif
  }
  TILESIM_HD static std::uint16_t store(float x) {
#ifdef __CUDA_ARCH__
    return __half_as_ushort(__float2half_rn(x));
#else
    return tilesim::to_float16(x).bits;
#endif
  }
};

// bfloat16, held as its bit pattern.
struct BFloat16Storage {
  using type = std::uint16_t;
  static constexpr DType dtype = DType::bfloat16;
  TILESIM_HD static float load(std::uint16_t bits) {
#ifdef __CUDA_ARCH__
    return __bfloat162float(__ushort_as_bfloat16(bits));
#else
    return tilesim::to_float(BFloat16{bits});
#endif
  }
  TILESIM_HD static std::uint16_t store(float x) {
#ifdef __CUDA_ARCH__
    return __bfloat16_as_ushort(__float2bfloat16_rn(x));
#else
    return tilesim::to_bfloat16(x).bits;
#endif
  }
};

// Host-side copies between tilesim's float32 values and a storage (the backend's upload and download,
// the tests' inputs and outputs). A half dtype's values are exactly representable, so stored() is exact
// for them; widened() always is.
template <class S>
std::vector<typename S::type> stored(const std::vector<float>& values) {
  std::vector<typename S::type> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = S::store(values[i]);
  return out;
}
template <class S>
std::vector<float> widened(const std::vector<typename S::type>& values) {
  std::vector<float> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = S::load(values[i]);
  return out;
}

}  // namespace tilesim::kernels::cuda
