#pragma once
// Dense float32 matrix products through OpenBLAS (Debian's libopenblas-dev): a tuned, AVX-512 SGEMM is
// what PyTorch itself calls for mm on a CPU, and no hand loop here would match it. Not yet an op of the
// op graph (the GNN layers' linear transforms will be); the benchmark compares it with at::mm/addmm.
#include <cstdint>
#include <string>

namespace tilesim::kernels::cpu {

// c[m x n] = a[m x k] @ b[k x n], plus bias[n] on every row when bias is not null. Row-major, dense.
void matmul_f32(const float* a, const float* b, std::int64_t m, std::int64_t k, std::int64_t n, const float* bias, float* c);

// OpenBLAS keeps its own thread pool: matmul_f32 sets it to the OpenMP thread count the other kernels use
// on first call (and when that count changes), so every kernel works on the same cores.
int blas_threads();
// "OpenBLAS 0.3.21 ..." as the library describes its build.
std::string blas_description();

}  // namespace tilesim::kernels::cpu
