// Elementwise kernels. Loops are written for the auto-vectoriser (`omp simd`, straight-line bodies; this
// file is compiled with -fno-math-errno and -fno-trapping-math so sqrt and the float selects vectorise):
// exp and softplus are computed here rather than through libm, which GCC vectorises only under
// -ffast-math (glibc's libmvec), whose other liberties (no NaN, no infinities) the op graph's semantics
// cannot take. cos (SchNet's cutoff, one value per edge) stays a libm call.
#include "kernels/cpu/elementwise.hpp"

#include <omp.h>

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "kernels/cpu/parallel.hpp"

namespace tilesim::kernels::cpu {
namespace {

constexpr double kLn2 = 0.69314718055994530942;

// e^x for double x in [-110, 100] (every float input's result, once rounded to float, is decided there):
// x = n ln2 + r with |r| <= ln2 / 2, e^r by its Taylor series to r^7 (truncation below 6e-9 relative, a
// tenth of a float32 ulp), times 2^n built in the exponent bits (double's range holds every 2^n a float
// needs). Straight-line code, so the loops around it vectorise.
inline double exp_core(double x) {
  constexpr double kLog2e = 1.4426950408889634074;
  constexpr double kRoundMagic = 0x1.8p52;  // adding it rounds a |double| < 2^51 to an integer
  const double n = (x * kLog2e + kRoundMagic) - kRoundMagic;
  const double r = x - n * kLn2;
  double p = 1.0 / 5040;
  p = p * r + 1.0 / 720;
  p = p * r + 1.0 / 120;
  p = p * r + 1.0 / 24;
  p = p * r + 1.0 / 6;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  const std::int64_t bits = (static_cast<std::int64_t>(n) + 1023) << 52;
  double scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

inline double clamp_exp_argument(double x) {
  x = x < -110.0 ? -110.0 : x;  // e^-110 is below half the smallest float subnormal: rounds to 0
  return x > 100.0 ? 100.0 : x;  // e^100 is beyond float's range: rounds to infinity
}

// e^x: the conversion to float rounds once and gives float's own overflow to infinity and gradual
// underflow. Within 1 ulp of the exact value.
inline float exp_f32(float x) {
  const float result = static_cast<float>(exp_core(clamp_exp_argument(x)));
  return x == x ? result : x;  // NaN in, NaN out (the clamp would have lost it)
}

// log(1 + e^x) - log 2 as max(x, 0) + log1p(e^-|x|) - log 2 in double, which neither overflows nor loses
// e^x against 1; log1p(e) for e in (0, 1] as 2 atanh(s), s = e / (2 + e) <= 1/3, by its odd series to
// s^19 (truncation below 1e-10). One rounding to float at the end.
inline double softplus_f64(float x) {
  const double xd = x;
  const double magnitude = xd < 0 ? -xd : xd;
  const double e = exp_core(clamp_exp_argument(-magnitude));
  const double s = e / (2.0 + e), s2 = s * s;
  double series = 1.0 / 19;
  for (int k = 17; k >= 1; k -= 2) series = series * s2 + 1.0 / k;
  const double log1p_e = 2.0 * s * series;
  return (xd > 0 ? xd : 0.0) + log1p_e;
}
inline float shifted_softplus_f32(float x) {
  const float result = static_cast<float>(softplus_f64(x) - kLn2);
  return x == x ? result : x;
}
// torch's softplus: the same log(1 + e^x), and x itself above its threshold 20.
inline float softplus_f32(float x) {
  const float result = x > 20.0f ? x : static_cast<float>(softplus_f64(x));
  return x == x ? result : x;
}
// 1 / (1 + e^-x) in double, one rounding at the end. e^-x is clamped to [e^-110, e^110] (not exp's
// float range): below x = -110 the result is under half the smallest float subnormal and rounds to 0.
inline float sigmoid_f32(float x) {
  const double a = -static_cast<double>(x);
  const double clamped = a < -110.0 ? -110.0 : (a > 110.0 ? 110.0 : a);
  const float result = static_cast<float>(1.0 / (1.0 + exp_core(clamped)));
  return x == x ? result : x;
}

void unary_block(UnaryFn fn, float s, const float* x, float* out, std::int64_t begin, std::int64_t end) {
  switch (fn) {
    case UnaryFn::relu:
#pragma omp simd
      for (std::int64_t i = begin; i < end; ++i) out[i] = x[i] > 0.0f ? x[i] : 0.0f;
      return;
    case UnaryFn::leaky_relu:
#pragma omp simd
      for (std::int64_t i = begin; i < end; ++i) out[i] = x[i] >= 0.0f ? x[i] : s * x[i];
      return;
    case UnaryFn::scale:
#pragma omp simd
      for (std::int64_t i = begin; i < end; ++i) out[i] = s * x[i];
      return;
    case UnaryFn::exp:
#pragma omp simd
      for (std::int64_t i = begin; i < end; ++i) out[i] = exp_f32(x[i]);
      return;
    case UnaryFn::shifted_softplus:
#pragma omp simd
      for (std::int64_t i = begin; i < end; ++i) out[i] = shifted_softplus_f32(x[i]);
      return;
    case UnaryFn::softplus:
#pragma omp simd
      for (std::int64_t i = begin; i < end; ++i) out[i] = softplus_f32(x[i]);
      return;
    case UnaryFn::sigmoid:
#pragma omp simd
      for (std::int64_t i = begin; i < end; ++i) out[i] = sigmoid_f32(x[i]);
      return;
    case UnaryFn::sqrt:
#pragma omp simd
      for (std::int64_t i = begin; i < end; ++i) out[i] = std::sqrt(x[i]);
      return;
    case UnaryFn::log:
      for (std::int64_t i = begin; i < end; ++i) out[i] = std::log(x[i]);
      return;
    case UnaryFn::clamp_min:
#pragma omp simd
      for (std::int64_t i = begin; i < end; ++i) out[i] = x[i] < s ? s : x[i];  // NaN stays NaN, as torch's
      return;
    case UnaryFn::rsqrt_or_zero:
#pragma omp simd
      for (std::int64_t i = begin; i < end; ++i) out[i] = x[i] > 0.0f ? 1.0f / std::sqrt(x[i]) : 0.0f;
      return;
    case UnaryFn::reciprocal_or_zero:
#pragma omp simd
      for (std::int64_t i = begin; i < end; ++i) out[i] = x[i] != 0.0f ? 1.0f / x[i] : 0.0f;
      return;
    case UnaryFn::cosine_cutoff: {
      const float pi_over_cutoff = static_cast<float>(3.14159265358979323846 / static_cast<double>(s));
      for (std::int64_t i = begin; i < end; ++i) out[i] = x[i] < s ? 0.5f * (std::cos(x[i] * pi_over_cutoff) + 1.0f) : 0.0f;
      return;
    }
  }
  throw std::logic_error("unary_f32: unknown function");
}

template <class F>
void binary_rows(const F& f, const float* x, std::int64_t row_begin, std::int64_t row_end, std::int64_t num_features,
                 const float* other, std::int64_t other_rows, std::int64_t other_groups, float* out) {
  const std::int64_t per_group = num_features / other_groups;
  for (std::int64_t r = row_begin; r < row_end; ++r) {
    const float* a = x + r * num_features;
    const float* b = other + (other_rows == 1 ? 0 : r) * other_groups;
    float* o = out + r * num_features;
    if (per_group == 1) {  // same shape, or one row of per-column values (a bias)
#pragma omp simd
      for (std::int64_t c = 0; c < num_features; ++c) o[c] = f(a[c], b[c]);
    } else {
      for (std::int64_t g = 0; g < other_groups; ++g) {
        const float bg = b[g];
        const std::int64_t c0 = g * per_group;
#pragma omp simd
        for (std::int64_t c = c0; c < c0 + per_group; ++c) o[c] = f(a[c], bg);
      }
    }
  }
}

}  // namespace

void unary_f32(UnaryFn fn, float scalar, const float* x, std::int64_t count, float* out) {
  parallel::for_each_block(count, 8 * count, [&](std::int64_t begin, std::int64_t end) { unary_block(fn, scalar, x, out, begin, end); });
}

void binary_f32(BinaryFn fn, const float* x, std::int64_t num_rows, std::int64_t num_features, const float* other,
                std::int64_t other_rows, std::int64_t other_groups, float* out) {
  if (other_groups <= 0 || num_features % other_groups != 0 || (other_rows != 1 && other_rows != num_rows))
    throw std::invalid_argument("binary_f32: other is " + std::to_string(other_rows) + " x " + std::to_string(other_groups) +
                                ", which does not broadcast over " + std::to_string(num_rows) + " x " + std::to_string(num_features));
  const std::int64_t bytes = 8 * num_rows * num_features;
  // Threads split rows (a row's columns share its broadcast values), about evenly.
  const int threads = parallel::threads_for(bytes);
  auto run = [&](std::int64_t r0, std::int64_t r1) {
    switch (fn) {
      case BinaryFn::add: binary_rows([](float a, float b) { return a + b; }, x, r0, r1, num_features, other, other_rows, other_groups, out); return;
      case BinaryFn::subtract: binary_rows([](float a, float b) { return a - b; }, x, r0, r1, num_features, other, other_rows, other_groups, out); return;
      case BinaryFn::multiply: binary_rows([](float a, float b) { return a * b; }, x, r0, r1, num_features, other, other_rows, other_groups, out); return;
      case BinaryFn::divide: binary_rows([](float a, float b) { return a / b; }, x, r0, r1, num_features, other, other_rows, other_groups, out); return;
      case BinaryFn::equal: binary_rows([](float a, float b) { return a == b ? 1.0f : 0.0f; }, x, r0, r1, num_features, other, other_rows, other_groups, out); return;
    }
  };
  if (threads == 1) {
    run(0, num_rows);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int parts = omp_get_num_threads(), part = omp_get_thread_num();
    run(parallel::part_begin(num_rows, parts, part), parallel::part_begin(num_rows, parts, part + 1));
  }
}

}  // namespace tilesim::kernels::cpu
