#pragma once
// Dense matrix products through oneDNN's matmul primitive (Debian libdnnl-dev). oneDNN chooses its
// kernel at run time from cpuid (AMX tiles, AVX-512-BF16, AVX-512-FP16, plain AVX-512 or AVX2), so one
// build runs the fastest path each x86-64 host has. Low-precision products accumulate in float32 and
// round the output once. matmul.hpp is the public interface; this file is its oneDNN back end.
#include <cstdint>
#include <string>

namespace tilesim::kernels::cpu {

enum class MatmulDtype { float32, float16, bfloat16 };

// c[m x n] = op(a) @ op(b) (+ bias[n] on every row), row-major and dense. op(a) is a stored [k x m]
// read transposed when a_transposed, op(b) a stored [n x k] when b_transposed. m, k, n are > 0.
struct MatmulShape {
  std::int64_t m = 0, k = 0, n = 0;
  bool a_transposed = false, b_transposed = false, has_bias = false;
};

// Runs the product in `dtype` (every pointer holds values of that storage type) and returns true, or
// returns false without touching c when oneDNN has no optimised kernel for it on this host (none at all,
// or only its reference loops): the caller then converts to float32. Primitives are built once per
// shape, dtype and thread count and kept (building one costs 0.1-2 ms, as much as a small product).
bool onednn_matmul(MatmulDtype dtype, const void* a, const void* b, const void* bias, void* c, const MatmulShape& shape);

// oneDNN's name for the kernel it runs for a large product in `dtype` on this host, such as
// "brg:avx512_core_amx_bf16"; empty when onednn_matmul would return false.
std::string onednn_kernel(MatmulDtype dtype);

// "oneDNN 2.6.3" as the loaded library reports its version.
std::string onednn_version();

// Whether oneDNN may run AVX-512 kernels in this process: the host has AVX-512 and no
// ONEDNN_MAX_CPU_ISA / DNNL_MAX_CPU_ISA cap holds the library below it (make test-isa-capped caps it at
// AVX2). Asked of oneDNN itself, which fixes its ISA at the first call.
bool onednn_allows_avx512();

}  // namespace tilesim::kernels::cpu
