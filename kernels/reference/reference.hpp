#pragma once
// Simple, obviously-correct reference implementations, and the check every backend's outputs go
// through. Scatter-add is summed in double; a float32 result passes when it lies within the rigorous
// bound of recursive float32 summation, (n - 1) * 2^-24 * sum|terms| per element, so the check
// accepts any summation order and never flakes, yet catches a missing, doubled or misplaced term.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/op_graph.hpp"
#include "ir/tensor_values.hpp"

namespace tilesim::kernels::reference {

std::vector<float> gather(const std::vector<float>& table, std::int64_t num_features, const std::vector<std::int32_t>& indices);

struct ScatterAddReference {
  std::vector<double> sum;       // exact-ish sum per output element
  std::vector<double> abs_sum;   // sum of |terms| per output element
  std::vector<std::int32_t> count_per_row;  // terms per output row
};
ScatterAddReference scatter_add(const std::vector<float>& src, std::int64_t num_features,
                                const std::vector<std::int32_t>& indices, std::int64_t num_outputs);

struct Verification {
  bool ok = false;
  std::int64_t mismatches = 0;
  std::string detail;   // what was checked, and the first mismatch if any
};

// Checks one op's output against the reference computed from `inputs`.
Verification verify(const Op& op, const TensorValues& inputs, const std::vector<float>& output);

}  // namespace tilesim::kernels::reference
