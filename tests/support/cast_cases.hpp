#pragma once
// One cast op over values that test a conversion's rounding, shared by the backends' cast tests.
#include <cmath>
#include <random>
#include <vector>

#include "ir/dtype.hpp"
#include "tests/support/cpu_op_cases.hpp"

namespace tilesim_test {

using tilesim::DType;
using tilesim::Op;
using tilesim::OpKind;
using tilesim::TensorId;

// Values that test a conversion's rounding: ties to even in float16 and bfloat16, float16's subnormals
// and overflow, signed zeros, infinities, and random values over a wide range.
inline std::vector<float> conversion_values(std::size_t count) {
  std::vector<float> v = {0.0f,          -0.0f,         1.0f,      1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 1.0f + 0x1p-8f,
                          1.0f + 0x1p-9f, -2.5f + 0x1p-10f, 65504.0f, 65520.0f,       1e5f,                3.0e-5f,
                          0x1p-24f,      0x1p-25f,      0x1.8p-25f, 6.1e-8f,        1e-30f,              3.3e38f,
                          INFINITY,      -INFINITY};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-40, 20);
  while (v.size() < count) v.push_back(std::ldexp(mantissa(rng), exponent(rng)));
  v.resize(count);
  return v;
}

// One cast of `values` (rounded into `from`) shaped [rows, cols] to `to`, times `scale`.
inline OpCase cast_case(DType from, DType to, float scale, std::int64_t rows, std::int64_t cols) {
  OpCaseBuilder b(1);
  std::vector<float> v = conversion_values(static_cast<std::size_t>(rows * cols));
  for (float& x : v) x = round_to(from, x);
  const TensorId in = b.values("x", {rows, cols}, v);
  OpCase c = b.take();
  c.graph.tensors[static_cast<std::size_t>(in)].dtype = from;
  c.values.set_f32(in, v, from);
  Op op = make_op("cast", OpKind::cast, {rows, cols, 0});
  op.dtype = to;
  op.input = in;
  op.scalar = scale;
  c.graph.add_op(op);
  return c;
}

}  // namespace tilesim_test
