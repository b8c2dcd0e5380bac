#pragma once
// How the vertices' functional bodies hold values in tile memory: float32 as float, float16 as IEEE
// binary16 bit patterns (ir/half_float.hpp). A body is written once over a storage type S and computes
// in float, as the IPU's half vector units accumulate each op's arithmetic before its 16-bit store: it
// loads with value(), stores with store() (which rounds to S), and is instantiated for the op's type by
// with_value_storage when the program is built, so the float32 bodies keep their plain loads and stores.
#include <stdexcept>
#include <string>

#include "ir/dtype.hpp"
#include "ir/half_float.hpp"

namespace tilesim::ipu {

inline float value(float x) { return x; }
inline float value(Float16 x) { return to_float(x); }

template <class S>
S stored(float x);
template <>
inline float stored<float>(float x) {
  return x;
}
template <>
inline Float16 stored<Float16>(float x) {
  return to_float16(x);
}

template <class S>
void store(S* at, float x) {
  *at = stored<S>(x);
}

// Calls f(S{}) with S the storage type of `dtype` (float32: float, float16: Float16); the result is f's.
template <class F>
auto with_value_storage(DType dtype, F&& f) {
  switch (dtype) {
    case DType::float32: return f(float{});
    case DType::float16: return f(Float16{});
    default: break;
  }
  throw std::logic_error("simulated IPU tiles hold float32 or float16 values, not " + to_string(dtype));
}

}  // namespace tilesim::ipu
