#include "kernels/cpu/matmul.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "common/error.hpp"
#include "kernels/cpu/parallel.hpp"

namespace tilesim::kernels::cpu {
namespace {

void match_openmp_threads() {
  const int wanted = omp_get_max_threads();
  if (openblas_get_num_threads() != wanted) openblas_set_num_threads(wanted);
}

// CBLAS takes int dimensions.
int to_blas_int(std::int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<int>::max())
    throw InputError("matmul_f32: " + std::string(what) + " = " + std::to_string(v) + " is outside [0, " +
                     std::to_string(std::numeric_limits<int>::max()) + "] (CBLAS takes int dimensions)");
  return static_cast<int>(v);
}

}  // namespace

void matmul_f32(const float* a, const float* b, std::int64_t m, std::int64_t k, std::int64_t n, const float* bias, float* c) {
  const int m_int = to_blas_int(m, "m"), k_int = to_blas_int(k, "k"), n_int = to_blas_int(n, "n");
  if (m == 0 || n == 0) return;
  match_openmp_threads();
  float beta = 0.0f;
  if (bias != nullptr) {
    // c starts as the broadcast bias, and SGEMM adds the product to it (beta = 1): one pass, as addmm.
    for (std::int64_t r = 0; r < m; ++r) std::memcpy(c + r * n, bias, static_cast<std::size_t>(n) * sizeof(float));
    beta = 1.0f;
  }
  if (k == 0) {
    if (bias == nullptr) std::fill_n(c, m * n, 0.0f);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m_int, n_int, k_int, 1.0f, a, k_int, b, n_int, beta, c, n_int);
}

void matmul_transposed_f32(const float* a, bool a_transposed, const float* b, bool b_transposed, std::int64_t m, std::int64_t k,
                           std::int64_t n, float* c) {
  const int m_int = to_blas_int(m, "m"), k_int = to_blas_int(k, "k"), n_int = to_blas_int(n, "n");
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill_n(c, m * n, 0.0f);
    return;
  }
  match_openmp_threads();
  cblas_sgemm(CblasRowMajor, a_transposed ? CblasTrans : CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans, m_int, n_int,
              k_int, 1.0f, a, a_transposed ? m_int : k_int, b, b_transposed ? k_int : n_int, 0.0f, c, n_int);
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

int blas_threads() { return openblas_get_num_threads(); }

std::string blas_description() {
  const char* config = openblas_get_config();  // "OpenBLAS 0.3.21 DYNAMIC_ARCH ..."
  return config ? config : "OpenBLAS";
}

}  // namespace tilesim::kernels::cpu
