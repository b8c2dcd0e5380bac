#include "kernels/cpu/matmul.hpp"

#include <omp.h>

#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/error.hpp"
#include "kernels/cpu/onednn_matmul.hpp"
#include "kernels/cpu/parallel.hpp"
#include "kernels/cpu/storage_convert.hpp"

namespace tilesim::kernels::cpu {
namespace {

template <class T>
MatmulDtype dtype_of();
template <>
MatmulDtype dtype_of<float>() { return MatmulDtype::float32; }
template <>
MatmulDtype dtype_of<Float16>() { return MatmulDtype::float16; }
template <>
MatmulDtype dtype_of<BFloat16>() { return MatmulDtype::bfloat16; }

// The libraries' kernels index with int (CBLAS takes int dimensions, oneDNN's brgemm blocks are int).
void check_dim(std::int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<int>::max())
    throw InputError("matmul: " + std::string(what) + " = " + std::to_string(v) + " is outside [0, " +
                     std::to_string(std::numeric_limits<int>::max()) + "] (the GEMM libraries index with int)");
}

// The empty products: nothing to write when m or n is 0; the bias (or zeros) when k is 0. Returns true
// when it handled the call.
template <class T>
bool empty_product(std::int64_t m, std::int64_t k, std::int64_t n, const T* bias, T* c) {
  check_dim(m, "m");
  check_dim(k, "k");
  check_dim(n, "n");
  if (m == 0 || n == 0) return true;
  if (k != 0) return false;
  for (std::int64_t r = 0; r < m; ++r) {
    if (bias != nullptr) std::copy_n(bias, n, c + r * n);
    else std::fill_n(c + r * n, n, from_float<T>(0.0f));
  }
  return true;
}

// The float32 operands of a widened product, kept by the calling thread so repeated calls do not pay
// page faults for fresh buffers.
std::vector<float>& widened(int slot, std::int64_t count) {
  thread_local std::vector<float> buffers[4];
  auto& v = buffers[slot];
  if (static_cast<std::int64_t>(v.size()) < count) v.resize(static_cast<std::size_t>(count));
  return v;
}

MatmulShape shape_of(std::int64_t m, std::int64_t k, std::int64_t n, bool a_transposed, bool b_transposed, bool has_bias) {
  MatmulShape s;
  s.m = m;
  s.k = k;
  s.n = n;
  s.a_transposed = a_transposed;
  s.b_transposed = b_transposed;
  s.has_bias = has_bias;
  return s;
}

// A non-empty product of T: oneDNN's kernel for T where it has one, else widened to float32.
template <class T>
void product(const T* a, bool a_transposed, const T* b, bool b_transposed, std::int64_t m, std::int64_t k, std::int64_t n,
             const T* bias, T* c) {
  if (onednn_matmul(dtype_of<T>(), a, b, bias, c, shape_of(m, k, n, a_transposed, b_transposed, bias != nullptr))) return;
  if constexpr (std::is_same_v<T, float>) {
    // No oneDNN float32 kernel at all (it has one on every x86-64 host; this keeps the code total).
    openblas_matmul_f32(a, a_transposed, b, b_transposed, m, k, n, bias, c);
  } else {
    matmul_by_conversion(a, a_transposed, b, b_transposed, m, k, n, bias, c);
  }
}

}  // namespace

template <class T>
void matmul_by_conversion(const T* a, bool a_transposed, const T* b, bool b_transposed, std::int64_t m, std::int64_t k,
                          std::int64_t n, const T* bias, T* c) {
  if (empty_product(m, k, n, bias, c)) return;
  float* a32 = widened(0, m * k).data();
  float* b32 = widened(1, k * n).data();
  float* c32 = widened(2, m * n).data();
  float* bias32 = bias != nullptr ? widened(3, n).data() : nullptr;
  widen(a, m * k, a32);
  widen(b, k * n, b32);
  if (bias != nullptr) widen(bias, n, bias32);
  if (!onednn_matmul(MatmulDtype::float32, a32, b32, bias32, c32, shape_of(m, k, n, a_transposed, b_transposed, bias != nullptr)))
    openblas_matmul_f32(a32, a_transposed, b32, b_transposed, m, k, n, bias32, c32);
  narrow(c32, m * n, c);
}

template <class T>
void matmul(const T* a, const T* b, std::int64_t m, std::int64_t k, std::int64_t n, const T* bias, T* c) {
  if (empty_product(m, k, n, bias, c)) return;
  product(a, false, b, false, m, k, n, bias, c);
}

template <class T>
void matmul_transposed(const T* a, bool a_transposed, const T* b, bool b_transposed, std::int64_t m, std::int64_t k,
                       std::int64_t n, T* c) {
  if (empty_product<T>(m, k, n, nullptr, c)) return;
  product<T>(a, a_transposed, b, b_transposed, m, k, n, nullptr, c);
}

std::string instruction_set_of_kernel(const std::string& kernel, const std::string& dtype) {
  const bool half = dtype != "float32";
  if (kernel.empty()) return half ? "conversion to float32" : "other";
  if (kernel.find("amx") != std::string::npos) return "AMX";
  if (kernel.find("avx512_core_fp16") != std::string::npos) return half ? "AVX-512-FP16" : "AVX-512";
  if (kernel.find("avx512_core_bf16") != std::string::npos) return half ? "AVX-512-BF16" : "AVX-512";
  // A 16-bit product on a kernel without its instruction set: oneDNN widens to float32 inside.
  if (half) return "conversion to float32";
  if (kernel.find("avx512") != std::string::npos) return "AVX-512";
  if (kernel.find("avx2") != std::string::npos) return "AVX2";
  return "other";
}

template <class T>
std::string matmul_kernel() {
  const std::string own = onednn_kernel(dtype_of<T>());
  if (!own.empty()) return onednn_version() + " " + own;
  if constexpr (std::is_same_v<T, float>) {
    return "OpenBLAS " + openblas_core();
  } else {
    const std::string f32 = onednn_kernel(MatmulDtype::float32);
    return "float32 via " + (f32.empty() ? "OpenBLAS " + openblas_core() : onednn_version() + " " + f32) + " (" +
           storage_name<T>() + " widened)";
  }
}

template <class T>
std::string matmul_instruction_set() {
  const std::string own = onednn_kernel(dtype_of<T>());
  if (std::is_same_v<T, float> && own.empty()) return "other";
  return instruction_set_of_kernel(own, storage_name<T>());
}

template void matmul<float>(const float*, const float*, std::int64_t, std::int64_t, std::int64_t, const float*, float*);
template void matmul<Float16>(const Float16*, const Float16*, std::int64_t, std::int64_t, std::int64_t, const Float16*, Float16*);
template void matmul<BFloat16>(const BFloat16*, const BFloat16*, std::int64_t, std::int64_t, std::int64_t, const BFloat16*,
                               BFloat16*);
template void matmul_transposed<float>(const float*, bool, const float*, bool, std::int64_t, std::int64_t, std::int64_t, float*);
template void matmul_transposed<Float16>(const Float16*, bool, const Float16*, bool, std::int64_t, std::int64_t, std::int64_t,
                                         Float16*);
template void matmul_transposed<BFloat16>(const BFloat16*, bool, const BFloat16*, bool, std::int64_t, std::int64_t, std::int64_t,
                                          BFloat16*);
template void matmul_by_conversion<Float16>(const Float16*, bool, const Float16*, bool, std::int64_t, std::int64_t,
                                            std::int64_t, const Float16*, Float16*);
template void matmul_by_conversion<BFloat16>(const BFloat16*, bool, const BFloat16*, bool, std::int64_t, std::int64_t,
                                             std::int64_t, const BFloat16*, BFloat16*);
template std::string matmul_kernel<float>();
template std::string matmul_kernel<Float16>();
template std::string matmul_kernel<BFloat16>();
template std::string matmul_instruction_set<float>();
template std::string matmul_instruction_set<Float16>();
template std::string matmul_instruction_set<BFloat16>();

void matmul_f32(const float* a, const float* b, std::int64_t m, std::int64_t k, std::int64_t n, const float* bias, float* c) {
  matmul<float>(a, b, m, k, n, bias, c);
}

void matmul_transposed_f32(const float* a, bool a_transposed, const float* b, bool b_transposed, std::int64_t m, std::int64_t k,
                           std::int64_t n, float* c) {
  matmul_transposed<float>(a, a_transposed, b, b_transposed, m, k, n, c);
}

namespace {

// The segments of a segment_matmul over M = offsets[S] rows: `large(s, begin, rows)` for each segment of
// at least kSegmentBlasMinRows rows (one SGEMM each), then `small_row(s, r)` for every row of the
// smaller segments, split over threads in one loop (no per-call allocation): each row finds its segment
// by binary search over the offsets and skips the rows SGEMM did.
template <class Large, class SmallRow>
void by_segment(const std::int32_t* offsets, std::int64_t num_segments, std::int64_t k, std::int64_t n, Large large,
                SmallRow small_row) {
  std::int64_t small_rows = 0;
  for (std::int64_t s = 0; s < num_segments; ++s) {
    const std::int64_t begin = offsets[s], rows = offsets[s + 1] - offsets[s];
    if (rows >= kSegmentBlasMinRows) large(s, begin, rows);
    else small_rows += rows;
  }
  if (small_rows == 0) return;
  const std::int64_t m = offsets[num_segments];
  const int threads = parallel::threads_for(4 * small_rows * (k + n) + 4 * k * n);
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
  for (std::int64_t r = 0; r < m; ++r) {
    const std::int64_t s = std::upper_bound(offsets, offsets + num_segments + 1, static_cast<std::int32_t>(r)) - offsets - 1;
    if (offsets[s + 1] - offsets[s] >= kSegmentBlasMinRows) continue;
    small_row(s, r);
  }
}

}  // namespace

void segment_matmul_f32(const float* a, const std::int32_t* offsets, std::int64_t num_segments, const float* weights,
                        std::int64_t k, std::int64_t n, float* c) {
  by_segment(
      offsets, num_segments, k, n,
      [&](std::int64_t s, std::int64_t begin, std::int64_t rows) {
        matmul_f32(a + begin * k, weights + s * k * n, rows, k, n, nullptr, c + begin * n);
      },
      // c[r, :] = sum over p of a[r, p] * w[p, :], the inner loop over n vectorised.
      [&](std::int64_t s, std::int64_t r) {
        const float* w = weights + s * k * n;
        const float* ar = a + r * k;
        float* cr = c + r * n;
        std::fill_n(cr, n, 0.0f);
        for (std::int64_t p = 0; p < k; ++p) {
          const float ap = ar[p];
          const float* wp = w + p * n;
#pragma omp simd
          for (std::int64_t j = 0; j < n; ++j) cr[j] += ap * wp[j];
        }
      });
}

void segment_matmul_transposed_weight_f32(const float* a, const std::int32_t* offsets, std::int64_t num_segments,
                                          const float* weights, std::int64_t k, std::int64_t n, float* c) {
  by_segment(
      offsets, num_segments, k, n,
      [&](std::int64_t s, std::int64_t begin, std::int64_t rows) {
        matmul_transposed_f32(a + begin * k, false, weights + s * k * n, true, rows, k, n, c + begin * n);
      },
      // c[r, j] = a[r, :] . w[j, :], both rows contiguous.
      [&](std::int64_t s, std::int64_t r) {
        const float* w = weights + s * k * n;
        const float* ar = a + r * k;
        float* cr = c + r * n;
        for (std::int64_t j = 0; j < n; ++j) {
          const float* wj = w + j * k;
          float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
          for (std::int64_t p = 0; p < k; ++p) sum += ar[p] * wj[p];
          cr[j] = sum;
        }
      });
}

void segment_matmul_transposed_input_f32(const float* a, const std::int32_t* offsets, std::int64_t num_segments, const float* g,
                                         std::int64_t k, std::int64_t n, float* c) {
  std::int64_t small_rows = 0;
  for (std::int64_t s = 0; s < num_segments; ++s) {
    const std::int64_t begin = offsets[s], rows = offsets[s + 1] - offsets[s];
    if (rows >= kSegmentBlasMinRows) matmul_transposed_f32(a + begin * k, true, g + begin * n, false, k, rows, n, c + s * k * n);
    else small_rows += rows;
  }
  // The small (and empty) segments' blocks, one block row c[s, p, :] = sum over the segment's rows r of
  // a[r, p] * g[r, :] per iteration, split over threads.
  const int threads = parallel::threads_for(4 * small_rows * (k + n) + 4 * num_segments * k * n);
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
  for (std::int64_t sp = 0; sp < num_segments * k; ++sp) {
    const std::int64_t s = sp / k, p = sp % k;
    const std::int64_t begin = offsets[s], end = offsets[s + 1];
    if (end - begin >= kSegmentBlasMinRows) continue;
    float* cp = c + sp * n;
    std::fill_n(cp, n, 0.0f);
    for (std::int64_t r = begin; r < end; ++r) {
      const float arp = a[r * k + p];
      const float* gr = g + r * n;
#pragma omp simd
      for (std::int64_t j = 0; j < n; ++j) cp[j] += arp * gr[j];
    }
  }
}

}  // namespace tilesim::kernels::cpu
