#pragma once
// OpenBLAS's SGEMM (Debian libopenblas-dev): linked because the torch-cpu peer's libtorch calls it, and kept
// callable so the benchmarks can set it beside the oneDNN path matmul.hpp takes.
#include <cstdint>
#include <string>

namespace tilesim::kernels::cpu {

// c[m x n] = op(a) @ op(b) (+ bias[n] on every row when bias is not null), row-major and dense, as
// matmul_transposed<float> (matmul.hpp); dims in [0, 2^31 - 1] (InputError outside: CBLAS takes int).
void openblas_matmul_f32(const float* a, bool a_transposed, const float* b, bool b_transposed, std::int64_t m, std::int64_t k,
                         std::int64_t n, const float* bias, float* c);

// OpenBLAS keeps its own thread pool: openblas_matmul_f32 sets it to the OpenMP thread count the other
// kernels use on first call (and when that count changes), so every kernel works on the same cores.
int blas_threads();
// "OpenBLAS 0.3.21 ..." as the library describes its build.
std::string blas_description();
// The kernel set OpenBLAS chose at load ("SkylakeX", "Cooperlake", "Haswell", "Prescott", ...);
// openblas_coretype.hpp says how tilesim's programs make that choice from cpuid.
std::string openblas_core();

}  // namespace tilesim::kernels::cpu
