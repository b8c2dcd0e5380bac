#pragma once
// What the tests of the simulated IPU share: the shipped Bow machine file, loaded once per test process,
// and one gather or scatter op with seeded inputs.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ir/op_graph.hpp"
#include "ir/tensor_values.hpp"
#include "models/ipu/machine/machine_file.hpp"

namespace tilesim_test {

// n standard-normal values, and n indices uniform in [0, range), each from a generator seeded with `seed`.
inline std::vector<float> normal_values(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = normal(rng);
  return v;
}

inline std::vector<std::int32_t> uniform_indices(std::int64_t n, std::int64_t range, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int32_t> uni(0, static_cast<std::int32_t>(range - 1));
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = uni(rng);
  return v;
}

// A graph of ops over tensors, with the values of its graph inputs (standard-normal floats by seed).
struct GraphProblem {
  tilesim::OpGraph graph;
  tilesim::TensorValues values;
  tilesim::TensorId add_input(const std::string& name, std::vector<std::int64_t> shape, std::uint64_t seed) {
    const tilesim::TensorId id = graph.add_tensor({name, shape, tilesim::DType::float32});
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    values.set_f32(id, normal_values(n, seed));
    return id;
  }
  tilesim::TensorId add_indices(const std::string& name, std::vector<std::int32_t> idx) {
    const tilesim::TensorId id = graph.add_tensor({name, {static_cast<std::int64_t>(idx.size())}, tilesim::DType::int32});
    values.set_i32(id, std::move(idx));
    return id;
  }
  const tilesim::Op& op() const { return graph.ops.front(); }
};

inline const tilesim::ipu::IpuMachine& bow() {
  static const tilesim::ipu::IpuMachine m = tilesim::ipu::load_ipu_machine("bow");
  return m;
}

// One op (gather or a scatter kind) in a graph of its own, with its input values and indices.
struct IpuProblem {
  tilesim::OpGraph graph;
  tilesim::TensorValues values;
  const tilesim::Op& op() const { return graph.ops.front(); }
};

enum class IndexPattern { uniform, all_equal, sorted, first_half_only };

// Input values standard-normal, then indices drawn by `pattern` (uniform over the index range, all the
// last row, uniform then sorted, or uniform over the first half), from one generator seeded with `seed`.
inline IpuProblem make_problem(tilesim::OpKind kind, tilesim::OpShape shape, std::uint64_t seed,
                               IndexPattern pattern = IndexPattern::uniform) {
  IpuProblem p;
  const tilesim::Op& op = p.graph.add_gather_scatter("op", kind, tilesim::DType::float32, shape);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> input(static_cast<std::size_t>(shape.num_inputs * shape.num_features));
  for (auto& x : input) x = normal(rng);
  const std::int64_t range = op.index_range();
  std::vector<std::int32_t> idx(static_cast<std::size_t>(op.num_indices()));
  std::uniform_int_distribution<std::int32_t> uni(0, static_cast<std::int32_t>(range - 1));
  std::uniform_int_distribution<std::int32_t> half(0, static_cast<std::int32_t>(std::max<std::int64_t>(1, range / 2) - 1));
  for (auto& i : idx) {
    switch (pattern) {
      case IndexPattern::all_equal: i = static_cast<std::int32_t>(range - 1); break;
      case IndexPattern::first_half_only: i = half(rng); break;
      default: i = uni(rng);
    }
  }
  if (pattern == IndexPattern::sorted) std::sort(idx.begin(), idx.end());
  p.values.set_f32(op.input, std::move(input));
  p.values.set_i32(op.indices, std::move(idx));
  return p;
}

// The scatter family written out directly, in double: per output row the sum (scatter_add), the sum over
// the count (scatter_mean), the max (scatter_max) or the count (degree_count, F = 1, `msg` unused), and 0
// for a row that receives nothing. `msg` is [idx.size(), F] row-major.
inline std::vector<double> direct_scatter(tilesim::OpKind kind, const std::vector<float>& msg,
                                          const std::vector<std::int32_t>& idx, std::int64_t F, std::int64_t rows) {
  using tilesim::OpKind;
  const bool max = kind == OpKind::scatter_max;
  std::vector<double> out(static_cast<std::size_t>(rows * F), max ? -std::numeric_limits<double>::infinity() : 0.0);
  std::vector<std::int64_t> count(static_cast<std::size_t>(rows), 0);
  for (std::size_t e = 0; e < idx.size(); ++e) {
    const auto d = static_cast<std::size_t>(idx[e]);
    ++count[d];
    if (kind == OpKind::degree_count) continue;
    for (std::int64_t c = 0; c < F; ++c) {
      double& y = out[d * static_cast<std::size_t>(F) + static_cast<std::size_t>(c)];
      const double x = msg[e * static_cast<std::size_t>(F) + static_cast<std::size_t>(c)];
      y = max ? std::max(y, x) : y + x;
    }
  }
  for (std::size_t d = 0; d < count.size(); ++d) {
    for (std::int64_t c = 0; c < F; ++c) {
      double& y = out[d * static_cast<std::size_t>(F) + static_cast<std::size_t>(c)];
      if (kind == OpKind::degree_count) y = static_cast<double>(count[d]);
      else if (count[d] == 0) y = 0.0;
      else if (kind == OpKind::scatter_mean) y /= static_cast<double>(count[d]);
    }
  }
  return out;
}

}  // namespace tilesim_test
