#pragma once
// Dense matrix products in float32, float16 and bfloat16: the op graph's matmul (a linear layer) and
// segment_matmul (RGCN's per-relation weights, pyg_lib's segment_matmul) run here.
// All three dtypes go through oneDNN (onednn_matmul.hpp), which picks AMX, AVX-512-BF16, AVX-512-FP16
// or plain AVX-512/AVX2 kernels by cpuid at run time; where it has no kernel for a 16-bit dtype the
// operands are widened to float32 here, the product taken in float32 and the output rounded once.
// Either way a 16-bit product accumulates in float32 and rounds once, as PyTorch's autocast does.
// float32 goes through oneDNN because it measured at least as fast as OpenBLAS's SGEMM on this
// project's shapes and shares the OpenMP team with the other kernels (OpenBLAS keeps its own spinning
// thread pool); the figures are in bench/peer_table.cpp's matmul rows. OpenBLAS stays linked for the
// torch-cpu peer, which calls it, and for comparison (openblas_matmul.hpp).
#include <cstdint>
#include <string>

#include "kernels/cpu/openblas_matmul.hpp"
#include "kernels/cpu/storage.hpp"

namespace tilesim::kernels::cpu {

// c[m x n] = a[m x k] @ b[k x n], plus bias[n] on every row when bias is not null. Row-major, dense;
// T is float, Float16 or BFloat16 (every operand in it). m, k, n in [0, 2^31 - 1] (InputError outside:
// the libraries' kernels index with int); m or n == 0 writes nothing, k == 0 writes the bias (or zeros).
template <class T>
void matmul(const T* a, const T* b, std::int64_t m, std::int64_t k, std::int64_t n, const T* bias, T* c);

// The same product with either operand stored transposed (a weight's gradient x^T @ g reads x as stored,
// [k x m]; an input's gradient g @ W^T reads W as stored, [n x k]); no bias.
template <class T>
void matmul_transposed(const T* a, bool a_transposed, const T* b, bool b_transposed, std::int64_t m, std::int64_t k,
                       std::int64_t n, T* c);

// What runs a large product of T on this host, for reports: "oneDNN 2.6.3 brg:avx512_core_amx_bf16",
// or "float32 via oneDNN 2.6.3 brg:avx512_core (float16 widened)" where the operands are converted.
template <class T>
std::string matmul_kernel();

// The instruction set a large product of T uses on this host, one of: "AMX", "AVX-512-BF16",
// "AVX-512-FP16", "conversion to float32" (16-bit dtypes with no native kernel, whether tilesim or oneDNN
// widens them), "AVX-512", "AVX2", "other" (float32's own vector width).
template <class T>
std::string matmul_instruction_set();

// The instruction set named by a oneDNN kernel name (onednn_kernel()) for a product of `dtype`
// ("float32", "float16", "bfloat16"); an empty kernel name means tilesim converts to float32.
std::string instruction_set_of_kernel(const std::string& onednn_kernel_name, const std::string& dtype);

// The float32 fallback of a 16-bit product, used where oneDNN has no kernel for T: widen the operands,
// multiply in float32, round the output once. Public so that it is tested on hosts that never take it.
template <class T>
void matmul_by_conversion(const T* a, bool a_transposed, const T* b, bool b_transposed, std::int64_t m, std::int64_t k,
                          std::int64_t n, const T* bias, T* c);

// The float32 forms by their earlier names (matmul<float>, matmul_transposed<float>).
void matmul_f32(const float* a, const float* b, std::int64_t m, std::int64_t k, std::int64_t n, const float* bias, float* c);

void matmul_transposed_f32(const float* a, bool a_transposed, const float* b, bool b_transposed, std::int64_t m, std::int64_t k,
                           std::int64_t n, float* c);

// Rows offsets[s] .. offsets[s + 1] - 1 of a [m x k] times weights[s] (k x n), for s in [0, num_segments);
// offsets has num_segments + 1 non-decreasing entries from 0 to m (callers check them). A segment of at
// least kSegmentBlasMinRows rows is one library product; smaller ones (where a GEMM's packing costs more than
// the product) are done by a row loop, rows split over threads.
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

}  // namespace tilesim::kernels::cpu
