#pragma once
// 16-bit storage formats for the kernels: values are stored as IEEE binary16 (float16) or bfloat16 and
// widened to float32 for every addition, so the rounding of a sum happens once, when it is stored.
// The scalar conversions here are exact (round to nearest even, NaN stays NaN); the row kernels in
// row_ops.hpp use the same rounding through AVX-512 where the target has it.
#include <cstdint>
#include <string>

#include "ir/half_float.hpp"

namespace tilesim::kernels::cpu {

// The formats and their conversions are tilesim's (ir/half_float.hpp); the kernels name them here.
using tilesim::BFloat16;
using tilesim::Float16;
using tilesim::bits_float;
using tilesim::float_bits;
using tilesim::to_bfloat16;
using tilesim::to_float;
using tilesim::to_float16;

// The storage types the kernels take, by name: "float32", "float16", "bfloat16".
template <class T>
const char* storage_name();
template <>
inline const char* storage_name<float>() { return "float32"; }
template <>
inline const char* storage_name<Float16>() { return "float16"; }
template <>
inline const char* storage_name<BFloat16>() { return "bfloat16"; }

template <class T>
T from_float(float x);
template <>
inline float from_float<float>(float x) { return x; }
template <>
inline Float16 from_float<Float16>(float x) { return to_float16(x); }
template <>
inline BFloat16 from_float<BFloat16>(float x) { return to_bfloat16(x); }

}  // namespace tilesim::kernels::cpu
