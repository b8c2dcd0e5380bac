#pragma once
// One op's operand values as a backend sees them: each operand tensor is either a graph input (given by
// the caller) or the output of an earlier op (kept by the backend). Every backend (cpu, torch-cpu,
// cuda, the simulated IPU) and the reference resolve and check operands through here, so a chained
// graph (op 2 reads op 1's output) behaves the same everywhere.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/op_graph.hpp"
#include "ir/tensor_values.hpp"

namespace tilesim {

// Non-owning views of the values an op reads (roles by kind: op_graph.hpp); nullptr where the op has no such operand (Op's field is -1).
// The pointed-to vectors belong to the TensorValues they were resolved from and must outlive this.
struct Operands {
  const std::vector<float>* input = nullptr;           // gather table, scatter src, dense left operand (null for degree_count)
  const std::vector<std::int32_t>* indices = nullptr;  // gather/scatter/degree_count indices; segment_matmul offsets
  const std::vector<float>* weight = nullptr;          // matmul [K, N], segment_matmul [S, K, N] ([S, N, K]
                                                       // transposed, the grad [M, N] with transpose_input); binary's `other`
  const std::vector<float>* bias = nullptr;            // matmul [N] when op.bias >= 0; optimizer_step's state
  const std::vector<float>* aux = nullptr;             // optimizer_step (adam): the step number [1, 1];
                                                       // loss, loss_grad: the row weights [M] when op.aux >= 0

  // The same slots by their role (Op's accessors of the same names).
  const std::vector<float>* optimizer_state() const { return bias; }
  const std::vector<float>* step_number() const { return aux; }
  const std::vector<float>* loss_row_weights() const { return aux; }
  const std::vector<std::int32_t>* segment_offsets() const { return indices; }
  const std::vector<float>* binary_other() const { return weight; }
};

// Each operand from `produced` (outputs of earlier ops) when it holds the tensor, else from `inputs`.
// Throws std::invalid_argument "op 'NAME': no values for its OPERAND tensor T" when neither holds it.
Operands resolve_operands(const Op& op, const TensorValues& inputs, const TensorValues& produced);
// Every operand from one set of values (a test's inputs, or a backend holding all tensors in one place).
Operands resolve_operands(const Op& op, const TensorValues& values);

// Checks that each operand the op reads is present with the element count op.shape implies, that
// indices lie in [0, op.index_range()), that segment_matmul offsets run from 0 to num_inputs without
// decreasing, and that a loss's row weights are finite and >= 0. Throws std::invalid_argument
// "<who>: op 'NAME': what was wrong" (who: e.g. "cpu backend").
// Checked once per op, so kernels can trust their indices: a bad one would write outside the output.
void check_operands(const Op& op, const Operands& operands, const std::string& who);

// Elements of the op's output: op.output_rows() * op.output_cols().
std::int64_t output_elements(const Op& op);

}  // namespace tilesim
