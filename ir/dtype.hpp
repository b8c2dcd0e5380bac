#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace tilesim {

// Element types of tensors. Values are float32, float16 (IEEE binary16) or bfloat16; indices are int32
// (as on the IPU, where PopTorch lowers torch's int64 indices to int32).
// A half tensor's values travel through tilesim (inputs, references, functional simulation) as float32
// numbers the half format represents exactly; its bytes, in every cost model, are two per element.
enum class DType { float32, int32, float16, bfloat16 };

// Bytes of one element. constexpr, so models can name their element sizes as constants.
constexpr std::int64_t dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::float32: return 4;
    case DType::int32: return 4;
    case DType::float16: return 2;
    case DType::bfloat16: return 2;
  }
  throw std::logic_error("dtype_bytes: unknown dtype");
}

// The value dtypes (everything but the index type).
constexpr bool is_value_dtype(DType dtype) { return dtype != DType::int32; }
constexpr bool is_half_dtype(DType dtype) { return dtype == DType::float16 || dtype == DType::bfloat16; }

// Unit roundoff of a value dtype's significand (half an ulp at 1): 2^-24 float32, 2^-11 float16,
// 2^-8 bfloat16. Rounding a real x to the format moves it by at most u |x| (normal range).
double unit_roundoff(DType dtype);
// Half the smallest subnormal step of a value dtype: among the subnormals rounding error is absolute, at
// most this much (2^-150 float32, 2^-25 float16, 2^-134 bfloat16).
double subnormal_half_step(DType dtype);

// A float32 value rounded to the nearest value of `dtype` (ties to even; NaN stays NaN; float16
// overflows to +-inf beyond 65504): the value a store into that format keeps. float32: x itself.
float round_to(DType dtype, float x);
// True when x is a value of `dtype` (round_to would not change it; NaN counts as representable).
bool representable(DType dtype, float x);

std::string to_string(DType dtype);
// Parses a value dtype name ("float32", "float16", "bfloat16"); nullopt for names tilesim does not know.
std::optional<DType> dtype_from_string(const std::string& name);

}  // namespace tilesim
