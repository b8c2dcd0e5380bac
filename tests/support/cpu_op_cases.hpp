#pragma once
// Small one-op (and chained) graphs of every op kind over seeded random values, shared by the reference,
// CPU-backend and torch-cpu tests. Each case holds the graph and its graph-input values, as a workload
// would hand them to a backend.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ir/op_graph.hpp"
#include "ir/tensor_values.hpp"

#include "tests/support/random_inputs.hpp"

namespace tilesim_test {

struct OpCase {
  tilesim::OpGraph graph;
  tilesim::TensorValues values;
  const tilesim::Op& op() const { return graph.ops.back(); }
};

class OpCaseBuilder {
 public:
  explicit OpCaseBuilder(std::uint32_t seed) : rng_(seed) {}

  tilesim::TensorId values(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> v) {
    const tilesim::TensorId id = c_.graph.add_tensor({name, std::move(shape), tilesim::DType::float32});
    c_.values.set_f32(id, std::move(v));
    return id;
  }
  // Uniform in [lo, hi); shape [rows, cols], or [rows] when cols is 0.
  tilesim::TensorId random(const std::string& name, std::int64_t rows, std::int64_t cols, float lo = -1.0f, float hi = 1.0f) {
    return values(name, cols == 0 ? std::vector<std::int64_t>{rows} : std::vector<std::int64_t>{rows, cols},
                  tilesim_test::random_values(rows * (cols == 0 ? 1 : cols), rng_, lo, hi));
  }
  tilesim::TensorId indices(const std::string& name, std::vector<std::int32_t> v) {
    const tilesim::TensorId id = c_.graph.add_tensor({name, {static_cast<std::int64_t>(v.size())}, tilesim::DType::int32});
    c_.values.set_i32(id, std::move(v));
    return id;
  }
  std::vector<std::int32_t> random_indices(std::int64_t count, std::int64_t range, bool sorted = false) {
    return tilesim_test::random_indices(count, range, rng_, sorted);
  }
  tilesim::TensorId add(tilesim::Op op) { return c_.graph.add_op(std::move(op)); }
  std::mt19937& rng() { return rng_; }
  OpCase take() { return std::move(c_); }

 private:
  std::mt19937 rng_;
  OpCase c_;
};

inline tilesim::Op make_op(const std::string& name, tilesim::OpKind kind, tilesim::OpShape shape) {
  tilesim::Op op;
  op.name = name;
  op.kind = kind;
  op.shape = shape;
  return op;
}

// scatter_add/mean/max: src [messages, features] in [-1, 1), the given indices into [0, outputs).
inline OpCase scatter_case(tilesim::OpKind kind, std::int64_t features, std::int64_t outputs, std::vector<std::int32_t> idx,
                           std::uint32_t seed) {
  OpCaseBuilder b(seed);
  tilesim::Op op = make_op("scatter", kind, {static_cast<std::int64_t>(idx.size()), features, outputs});
  op.input = b.random("src", op.shape.num_inputs, features);
  op.indices = b.indices("index", std::move(idx));
  b.add(op);
  return b.take();
}

inline OpCase degree_case(std::int64_t outputs, std::vector<std::int32_t> idx) {
  OpCaseBuilder b(1);
  tilesim::Op op = make_op("degree", tilesim::OpKind::degree_count, {static_cast<std::int64_t>(idx.size()), 1, outputs});
  op.indices = b.indices("index", std::move(idx));
  b.add(op);
  return b.take();
}

inline OpCase matmul_case(std::int64_t m, std::int64_t k, std::int64_t n, bool bias, std::uint32_t seed) {
  OpCaseBuilder b(seed);
  tilesim::OpShape shape;
  shape.num_inputs = m;
  shape.num_features = k;
  shape.out_features = n;
  tilesim::Op op = make_op("linear", tilesim::OpKind::matmul, shape);
  op.input = b.random("x", m, k);
  op.weight = b.random("weight", k, n);
  if (bias) op.bias = b.random("bias", n, 0);
  b.add(op);
  return b.take();
}

// Segments of the given sizes (0 allowed), one random weight each.
inline OpCase segment_matmul_case(const std::vector<std::int32_t>& sizes, std::int64_t k, std::int64_t n, std::uint32_t seed) {
  OpCaseBuilder b(seed);
  std::vector<std::int32_t> offsets{0};
  for (auto s : sizes) offsets.push_back(offsets.back() + s);
  tilesim::OpShape shape;
  shape.num_inputs = offsets.back();
  shape.num_features = k;
  shape.out_features = n;
  shape.num_segments = static_cast<std::int64_t>(sizes.size());
  tilesim::Op op = make_op("segment_linear", tilesim::OpKind::segment_matmul, shape);
  op.input = b.random("x", shape.num_inputs, k);
  op.indices = b.indices("offsets", offsets);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> w(static_cast<std::size_t>(shape.num_segments * k * n));
  for (float& x : w) x = d(b.rng());
  op.weight = b.values("weight", {shape.num_segments, k, n}, std::move(w));
  b.add(op);
  return b.take();
}

// Inputs uniform in [lo, hi).
inline OpCase unary_case(tilesim::UnaryFn fn, float scalar, std::int64_t rows, std::int64_t features, std::uint32_t seed,
                         float lo = -4.0f, float hi = 4.0f) {
  OpCaseBuilder b(seed);
  tilesim::Op op = make_op("unary", tilesim::OpKind::unary, {rows, features, 0});
  op.unary = fn;
  op.scalar = scalar;
  op.input = b.random("x", rows, features, lo, hi);
  b.add(op);
  return b.take();
}

// `other` in [0.5, 2) (a divisor far from 0).
inline OpCase binary_case(tilesim::BinaryFn fn, std::int64_t rows, std::int64_t features, std::int64_t other_rows,
                          std::int64_t other_groups, std::uint32_t seed) {
  OpCaseBuilder b(seed);
  tilesim::OpShape shape;
  shape.num_inputs = rows;
  shape.num_features = features;
  shape.other_rows = other_rows;
  shape.other_groups = other_groups;
  tilesim::Op op = make_op("binary", tilesim::OpKind::binary, shape);
  op.binary = fn;
  op.input = b.random("x", rows, features);
  op.weight = b.random("other", other_rows, other_groups, 0.5f, 2.0f);
  b.add(op);
  return b.take();
}

}  // namespace tilesim_test
