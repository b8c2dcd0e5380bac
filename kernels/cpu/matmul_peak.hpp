#pragma once
// The matmul ceiling of this host per dtype, for `tilesim calibrate` and the benchmarks: the FLOP rate of
// a large square product through matmul.hpp (oneDNN's kernel for the dtype, or float32 after widening),
// best of a few trials with all OpenMP threads. A register FMA loop cannot give this ceiling for the
// 16-bit dtypes: AMX tiles and the BF16/FP16 dot-product instructions are reached only through a GEMM.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace tilesim::kernels::cpu {

struct MatmulPeak {
  double flops_per_s = 0;       // best trial, 2 m k n FLOPs per product
  std::string instruction_set;  // matmul_instruction_set<T>(): "AMX", "AVX-512-BF16", ...
  std::string kernel;           // matmul_kernel<T>(): "oneDNN 2.6.3 brg:avx512_core_amx_bf16", ...
  nlohmann::json details;       // size, trials, every trial's rate
};

// size x size @ size x size in T ("float32", "float16" or "bfloat16"), one untimed warm-up call (which
// also builds the primitive) then `trials` timed ones. size >= 1, trials >= 1 (InputError otherwise).
MatmulPeak measure_matmul_peak(const std::string& dtype, std::int64_t size, int trials);

}  // namespace tilesim::kernels::cpu
