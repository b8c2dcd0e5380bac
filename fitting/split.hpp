#pragma once
// The calibration / held-out split of a measurement grid. Any model parameter fitted to data is fitted
// on the calibration half only, and errors are reported for both halves; the held-out half is the
// headline. The rule: round each size to its base-2 exponent; a point is in the calibration half when
// the three exponents sum to an even number. On the hydronet grid (powers of two) this is a
// checkerboard: each half has 297 points and spans every value of every size axis.
#include <cmath>
#include <cstdint>
#include <string>

#include "ir/op_graph.hpp"

namespace tilesim::fitting {

inline int size_exponent(std::int64_t size) { return static_cast<int>(std::lround(std::log2(static_cast<double>(size)))); }

inline bool in_calibration_split(const OpShape& shape) {
  const int sum = size_exponent(shape.num_inputs) + size_exponent(shape.num_features) + size_exponent(shape.num_outputs);
  return sum % 2 == 0;
}

// The rule in one sentence, for reports.
std::string split_rule_text();

}  // namespace tilesim::fitting
