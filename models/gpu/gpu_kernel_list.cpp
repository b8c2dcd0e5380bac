#include "models/gpu/gpu_kernel_list.hpp"

#include <algorithm>
#include <stdexcept>

namespace tilesim::gpu {

double peak_flops_per_s(DType dtype, const GpuMachine& m) {
  // ATen does the arithmetic of half tensors' elementwise, reduction and scatter kernels in float32
  // (its opmath type) on the CUDA cores: half storage halves their bytes, not their FLOP rate.
  if (is_value_dtype(dtype)) return m.fp32_flops_per_s;
  throw std::invalid_argument("GPU model: values of dtype " + to_string(dtype) + " are not modeled");
}

double gemm_peak_flops_per_s(DType dtype, const GpuMachine& m) {
  switch (dtype) {
    case DType::float32: return m.fp32_flops_per_s;
    case DType::float16: return m.fp16_flops_per_s;
    case DType::bfloat16: return m.bf16_flops_per_s;
    case DType::int32: break;
  }
  throw std::invalid_argument("GPU model: matrix products of dtype " + to_string(dtype) + " are not modeled");
}

void add_scatter_add_kernel(KernelList& ks, const GpuMachine& m, DType dtype, double rows, double features,
                            double out_elements, double updates_per_address) {
  const double value_bytes = static_cast<double>(dtype_bytes(dtype));
  const double messages = rows * features;
  ks.add("scatter_add_",
         messages * value_bytes + rows * static_cast<double>(m.index_bytes) + 2.0 * std::min(messages, out_elements) * value_bytes,
         {{"atomics", messages / (m.calibration.atomic_add_elements_per_sm_cycle * m.sm_cycles_per_s())},
          {"compute", messages / peak_flops_per_s(dtype, m)}},
         updates_per_address * m.same_address_atomic_add_s);
}

}  // namespace tilesim::gpu
