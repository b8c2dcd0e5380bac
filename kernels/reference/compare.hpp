#pragma once
// Cross-backend check: do two backends' outputs of one op agree? A gather must agree bit for bit; a
// scatter-add may differ only by float32 summation order, so each element may differ by at most twice
// the rounding bound of reference.hpp (both lie within it of the exact sum).
#include <string>
#include <vector>

#include "ir/op_graph.hpp"
#include "ir/tensor_values.hpp"

namespace tilesim::kernels::reference {

struct Agreement {
  bool equal = false;
  double max_abs_difference = 0;
  std::string detail;
};

Agreement compare_outputs(const Op& op, const TensorValues& inputs, const std::vector<float>& a, const std::vector<float>& b);

}  // namespace tilesim::kernels::reference
