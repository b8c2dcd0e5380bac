#include "kernels/cpu/openblas_matmul.hpp"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "common/error.hpp"

namespace tilesim::kernels::cpu {
namespace {

void match_openmp_threads() {
  const int wanted = omp_get_max_threads();
  if (openblas_get_num_threads() != wanted) openblas_set_num_threads(wanted);
}

// CBLAS takes int dimensions.
int to_blas_int(std::int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<int>::max())
    throw InputError("openblas_matmul_f32: " + std::string(what) + " = " + std::to_string(v) + " is outside [0, " +
                     std::to_string(std::numeric_limits<int>::max()) + "] (CBLAS takes int dimensions)");
  return static_cast<int>(v);
}

}  // namespace

void openblas_matmul_f32(const float* a, bool a_transposed, const float* b, bool b_transposed, std::int64_t m, std::int64_t k,
                         std::int64_t n, const float* bias, float* c) {
  const int m_int = to_blas_int(m, "m"), k_int = to_blas_int(k, "k"), n_int = to_blas_int(n, "n");
  if (m == 0 || n == 0) return;
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
  match_openmp_threads();
  cblas_sgemm(CblasRowMajor, a_transposed ? CblasTrans : CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans, m_int, n_int,
              k_int, 1.0f, a, a_transposed ? m_int : k_int, b, b_transposed ? k_int : n_int, beta, c, n_int);
}

int blas_threads() { return openblas_get_num_threads(); }

std::string blas_description() {
  const char* config = openblas_get_config();  // "OpenBLAS 0.3.21 DYNAMIC_ARCH ..."
  return config ? config : "OpenBLAS";
}

std::string openblas_core() {
  const char* core = openblas_get_corename();
  return core ? core : "";
}

}  // namespace tilesim::kernels::cpu
