#include "ir/dtype.hpp"

#include <cmath>

#include "ir/half_float.hpp"

namespace tilesim {

double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::float32: return 0x1p-24;
    case DType::float16: return 0x1p-11;
    case DType::bfloat16: return 0x1p-8;
    case DType::int32: break;
  }
  throw std::logic_error("unit_roundoff: " + to_string(dtype) + " is not a value dtype");
}

double subnormal_half_step(DType dtype) {
  switch (dtype) {
    case DType::float32: return 0x1p-150;
    case DType::float16: return 0x1p-25;
    case DType::bfloat16: return 0x1p-134;
    case DType::int32: break;
  }
  throw std::logic_error("subnormal_half_step: " + to_string(dtype) + " is not a value dtype");
}

float round_to(DType dtype, float x) {
  switch (dtype) {
    case DType::float32: return x;
    case DType::float16: return to_float(to_float16(x));
    case DType::bfloat16: return to_float(to_bfloat16(x));
    case DType::int32: break;
  }
  throw std::logic_error("round_to: " + to_string(dtype) + " is not a value dtype");
}

bool representable(DType dtype, float x) {
  if (std::isnan(x)) return true;
  return float_bits(round_to(dtype, x)) == float_bits(x);
}

std::string to_string(DType dtype) {
  switch (dtype) {
    case DType::float32: return "float32";
    case DType::int32: return "int32";
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
  }
  throw std::logic_error("to_string: unknown dtype");
}

std::optional<DType> dtype_from_string(const std::string& name) {
  if (name == "float32") return DType::float32;
  if (name == "float16") return DType::float16;
  if (name == "bfloat16") return DType::bfloat16;
  return std::nullopt;
}

}  // namespace tilesim
