#pragma once
// Row-level building blocks of the CPU kernels, inline so each kernel's inner loop compiles to straight
// AVX-512 code: 16 floats (one 64-byte cache line) per step, the tail through the scalar loop (which is
// also the whole path on targets without AVX-512). Intrinsics rather than the auto-vectoriser because
// GCC's tuning for an unknown -march=native CPU prefers 256-bit vectors, and half of this machine's
// vector width would be left unused.
#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
// GCC 12 warns that the intrinsics' own undefined-vector placeholders "may be used uninitialized" when
// they are inlined at -O3 (GCC bug 105593, fixed in 13); the warning points into this header.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#define TILESIM_ROW_OPS_AVX512 1
#endif

#include "kernels/cpu/storage.hpp"

namespace tilesim::kernels::cpu::rows {

constexpr std::int64_t kVectorFloats = 16;

struct Sum {
  static constexpr float identity() { return 0.0f; }
  static float apply(float acc, float x) { return acc + x; }
#ifdef TILESIM_ROW_OPS_AVX512
  static __m512 apply(__m512 acc, __m512 x) { return _mm512_add_ps(acc, x); }
#endif
};

// max(acc, x) as x > acc ? x : acc in both the scalar and the vector form (vmaxps(x, acc)), so every
// row gives the same bits whichever path its elements took.
struct Max {
  static constexpr float identity() { return -std::numeric_limits<float>::infinity(); }
  static float apply(float acc, float x) { return x > acc ? x : acc; }
#ifdef TILESIM_ROW_OPS_AVX512
  static __m512 apply(__m512 acc, __m512 x) { return _mm512_max_ps(x, acc); }
#endif
};

#ifdef TILESIM_ROW_OPS_AVX512
inline __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
inline __m512 load16(const Float16* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
inline __m512 load16(const BFloat16* p) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16));
}
inline void store16(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
inline void store16(Float16* p, __m512 v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
// Round to nearest even as storage.hpp's to_bfloat16: add 0x7FFF plus the kept lsb, keep the high half;
// NaNs get the quiet bit instead.
inline void store16(BFloat16* p, __m512 v) {
  const __m512i b = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(b, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7FFF))), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(0x40));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, rounded, quiet)));
}
#endif

// to[f] = op(to[f], from[f]) for f in [0, n): accumulate one stored row into a float32 row.
template <class Op, class T>
inline void combine(const T* __restrict from, std::int64_t n, float* __restrict to) {
  std::int64_t f = 0;
#ifdef TILESIM_ROW_OPS_AVX512
  for (; f + kVectorFloats <= n; f += kVectorFloats) store16(to + f, Op::apply(load16(to + f), load16(from + f)));
#endif
  for (; f < n; ++f) to[f] = Op::apply(to[f], to_float(from[f]));
}

// to[f] += scale * from[f]: one weighted message (SpMM). Multiply, then add, in both paths (no fused
// multiply-add), so the scalar tail rounds as the vector body does.
template <class T>
inline void add_scaled(const T* __restrict from, float scale, std::int64_t n, float* __restrict to) {
  std::int64_t f = 0;
#ifdef TILESIM_ROW_OPS_AVX512
  const __m512 s = _mm512_set1_ps(scale);
  for (; f + kVectorFloats <= n; f += kVectorFloats)
    store16(to + f, _mm512_add_ps(load16(to + f), _mm512_mul_ps(s, load16(from + f))));
#endif
  for (; f < n; ++f) {
    const float product = scale * to_float(from[f]);
    to[f] += product;
  }
}

// to[f] = float(from[f]): a stored row widened to float32 (exact: every 16-bit value is a float).
template <class T>
inline void load(const T* __restrict from, std::int64_t n, float* __restrict to) {
  std::int64_t f = 0;
#ifdef TILESIM_ROW_OPS_AVX512
  for (; f + kVectorFloats <= n; f += kVectorFloats) store16(to + f, load16(from + f));
#endif
  for (; f < n; ++f) to[f] = to_float(from[f]);
}

// to[f] = T(from[f]): a float32 row out to storage (the one rounding of a 16-bit result).
template <class T>
inline void store(const float* __restrict from, std::int64_t n, T* __restrict to) {
  std::int64_t f = 0;
#ifdef TILESIM_ROW_OPS_AVX512
  for (; f + kVectorFloats <= n; f += kVectorFloats) store16(to + f, load16(from + f));
#endif
  for (; f < n; ++f) to[f] = from_float<T>(from[f]);
}

// row[f] /= divisor: the finishing pass of a mean. A division, as ATen's mean does, not a multiplication
// by the reciprocal, which would round twice.
inline void divide(float* row, float divisor, std::int64_t n) {
  for (std::int64_t f = 0; f < n; ++f) row[f] /= divisor;
}

inline void fill(float* to, std::int64_t n, float value) {
  if (value == 0.0f) {
    std::memset(to, 0, static_cast<std::size_t>(n) * sizeof(float));
    return;
  }
  for (std::int64_t f = 0; f < n; ++f) to[f] = value;
}

}  // namespace tilesim::kernels::cpu::rows
