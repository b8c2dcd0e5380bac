#pragma once
// The 16-bit floating-point storage formats tilesim's value dtypes float16 (IEEE binary16) and bfloat16
// use, as bit patterns, with exact conversions to and from float32 (round to nearest even; NaN stays
// NaN). Values of a half dtype travel through tilesim as float32 numbers that these formats represent
// exactly (ir/tensor_values.hpp); kernels store them in these types.
#include <cstdint>
#include <cstring>

namespace tilesim {

struct Float16 {
  std::uint16_t bits = 0;
};
struct BFloat16 {
  std::uint16_t bits = 0;
};

inline std::uint32_t float_bits(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
inline float bits_float(std::uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

inline float to_float(float x) { return x; }
inline float to_float(BFloat16 x) { return bits_float(std::uint32_t{x.bits} << 16); }
inline float to_float(Float16 x) {
  const std::uint32_t sign = (std::uint32_t{x.bits} & 0x8000u) << 16;
  const std::uint32_t exponent = (x.bits >> 10) & 0x1Fu;
  std::uint32_t mantissa = x.bits & 0x3FFu;
  if (exponent == 0x1F) return bits_float(sign | 0x7F800000u | (mantissa << 13));  // inf, NaN (payload kept)
  if (exponent != 0) return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return bits_float(sign);  // +-0
  // Subnormal: shift the mantissa up until its leading one is the implicit bit.
  int e = 113;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    --e;
  }
  return bits_float(sign | (static_cast<std::uint32_t>(e) << 23) | ((mantissa & 0x3FFu) << 13));
}

// float32 -> bfloat16, round to nearest even; a NaN stays a (quiet) NaN.
inline BFloat16 to_bfloat16(float x) {
  const std::uint32_t b = float_bits(x);
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return BFloat16{static_cast<std::uint16_t>((b >> 16) | 0x40u)};
  const std::uint32_t rounding = 0x7FFFu + ((b >> 16) & 1u);
  return BFloat16{static_cast<std::uint16_t>((b + rounding) >> 16)};
}

// float32 -> float16, round to nearest even (overflow to inf, underflow through the subnormals to 0).
inline Float16 to_float16(float x) {
  const std::uint32_t b = float_bits(x);
  const auto sign = static_cast<std::uint16_t>((b >> 16) & 0x8000u);
  const std::uint32_t magnitude = b & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return Float16{static_cast<std::uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x1FFu))};
  if (magnitude >= 0x477FF000u) return Float16{static_cast<std::uint16_t>(sign | 0x7C00u)};  // rounds to >= 65520: inf
  if (magnitude < 0x38800000u) {
    // Below the smallest normal float16 (2^-14): a subnormal, mantissa = round(|x| * 2^24).
    if (magnitude < 0x33000000u) return Float16{sign};  // below half the smallest subnormal (2^-25): 0
    const std::uint32_t exponent = magnitude >> 23;
    const std::uint32_t mantissa = (magnitude & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126 - exponent;  // in [14, 24]
    const std::uint32_t kept = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    const std::uint32_t rounded = kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
    return Float16{static_cast<std::uint16_t>(sign | rounded)};
  }
  // Normal: rebias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits; a carry out of
  // the mantissa correctly bumps the exponent.
  const std::uint32_t rebased = magnitude - (112u << 23);
  const std::uint32_t rounded = rebased + 0xFFFu + ((rebased >> 13) & 1u);
  return Float16{static_cast<std::uint16_t>(sign | (rounded >> 13))};
}

}  // namespace tilesim
