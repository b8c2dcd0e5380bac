#pragma once
// Cross-backend check: do two backends' outputs of one op agree, given the same operand values? A gather
// must agree bit for bit, and the exact kinds (degree_count, scatter_max, relu) exactly; for the others
// each side lies within the reference's bound of the exact value (reference.hpp), so they may differ by
// at most the sum of the two sides' bounds (twice the bound where both accumulate alike; each side's
// Accumulation says how it adds up a half matmul's dot products).
// The bound holds for ops whose operands both backends read identically (graph inputs): for an op fed by
// an earlier op's output, each backend's output is checked against its own operands by verify(), and
// the two may drift apart by more than this bound.
#include <string>
#include <vector>

#include "ir/op_graph.hpp"
#include "ir/reference/reference.hpp"
#include "ir/operands.hpp"
#include "ir/tensor_values.hpp"

namespace tilesim::reference {

struct Agreement {
  bool equal = false;
  double max_abs_difference = 0;
  std::string detail;
};

Agreement compare_outputs(const Op& op, const Operands& operands, const std::vector<float>& a, const std::vector<float>& b,
                          const Accumulation& accumulation_a = {}, const Accumulation& accumulation_b = {});
// The same with every operand in `inputs` (std::invalid_argument when an operand is not there: an op
// fed by another op's output needs the overload below).
Agreement compare_outputs(const Op& op, const TensorValues& inputs, const std::vector<float>& a, const std::vector<float>& b,
                          const Accumulation& accumulation_a = {}, const Accumulation& accumulation_b = {});
// Operands from `produced` (e.g. backend a's computed outputs) where it holds them, else from `inputs`.
// For a chained op the bound is then backend a's; see the note above on how far b may drift from it.
Agreement compare_outputs(const Op& op, const TensorValues& inputs, const TensorValues& produced, const std::vector<float>& a,
                          const std::vector<float>& b, const Accumulation& accumulation_a = {},
                          const Accumulation& accumulation_b = {});

// A chained op whose operands both backends formed (`produced_a`, `produced_b`, graph inputs from
// `inputs`): the reference evaluated on each backend's own operands says how far apart their operands'
// rounding puts the exact outputs, so the outputs agree when, element by element,
//   |a - b| <= |exact(a's operands) - exact(b's operands)| + bound_a + bound_b.
// This holds for ops that amplify small operand differences (Adam's first update of a gradient near
// its eps moves by up to lr whatever the rounding), where a tolerance on the output's magnitude would
// not; each side's own output was verified against its own operands already.
Agreement compare_through_operands(const Op& op, const TensorValues& inputs, const TensorValues& produced_a,
                                   const TensorValues& produced_b, const std::vector<float>& a, const std::vector<float>& b,
                                   const Accumulation& accumulation_a = {}, const Accumulation& accumulation_b = {});

}  // namespace tilesim::reference
