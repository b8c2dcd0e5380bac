#pragma once
// Dense float32 matrix products through OpenBLAS (Debian's libopenblas-dev): a tuned, AVX-512 SGEMM is
// what PyTorch itself calls for mm on a CPU, and no hand loop here would match it. The op graph's matmul
// (a linear layer) and segment_matmul (RGCN's per-relation weights, pyg_lib's segment_matmul) run here.
#include <cstdint>
#include <string>

namespace tilesim::kernels::cpu {

// c[m x n] = a[m x k] @ b[k x n], plus bias[n] on every row when bias is not null. Row-major, dense.
void matmul_f32(const float* a, const float* b, std::int64_t m, std::int64_t k, std::int64_t n, const float* bias, float* c);

// The same product with either operand stored transposed (a weight's gradient x^T @ g reads x as stored,
// [k x m]; an input's gradient g @ W^T reads W as stored, [n x k]); no bias.
void matmul_transposed_f32(const float* a, bool a_transposed, const float* b, bool b_transposed, std::int64_t m, std::int64_t k,
                           std::int64_t n, float* c);

// Rows offsets[s] .. offsets[s + 1] - 1 of a [m x k] times weights[s] (k x n), for s in [0, num_segments);
// offsets has num_segments + 1 non-decreasing entries from 0 to m (callers check them). A segment of at
// least kSegmentBlasMinRows rows is one SGEMM; smaller ones (where SGEMM's packing costs more than the
// product) are done by a row loop, rows split over threads.
void segment_matmul_f32(const float* a, const std::int32_t* offsets, std::int64_t num_segments, const float* weights,
                        std::int64_t k, std::int64_t n, float* c);
constexpr std::int64_t kSegmentBlasMinRows = 32;

// segment_matmul's backward forms (pyg_lib's autograd), on the same offsets and blocking:
// the input's gradient: rows of a [m x k] times weights[s] stored [n x k], read transposed (g_s @ W_s^T);
void segment_matmul_transposed_weight_f32(const float* a, const std::int32_t* offsets, std::int64_t num_segments,
                                          const float* weights, std::int64_t k, std::int64_t n, float* c);
// the weight's gradient: c[s] (k x n) = a_s^T @ g_s over the rows of segment s, a [m x k], g [m x n],
// c [num_segments x k x n]; an empty segment's block is zeros.
void segment_matmul_transposed_input_f32(const float* a, const std::int32_t* offsets, std::int64_t num_segments, const float* g,
                                         std::int64_t k, std::int64_t n, float* c);

// OpenBLAS keeps its own thread pool: matmul_f32 sets it to the OpenMP thread count the other kernels use
// on first call (and when that count changes), so every kernel works on the same cores.
int blas_threads();
// "OpenBLAS 0.3.21 ..." as the library describes its build.
std::string blas_description();

}  // namespace tilesim::kernels::cpu
