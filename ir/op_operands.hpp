#pragma once
// Per-kind views of an op's operands. Op keeps its operand tensors in generic slots (`weight` is a
// binary op's right operand and an optimizer step's gradient, `bias` an optimizer's state, `aux` Adam's
// step number or a loss's row weights, `indices` segment offsets or a loss's labels: op_graph.hpp). A
// backend's code for one kind reads them by role through one of these views, so that a case says what it
// reads without the slot table at hand. Each function checks the op's kind and throws std::logic_error
// "op 'NAME': KIND, not the KINDS this view is for" otherwise; an absent operand is -1, as in Op.
#include "ir/op_graph.hpp"

namespace tilesim {

// optimizer_step: out [1 + S, P] from the parameter and its gradient (P elements each), the state
// [S, P] when the optimizer keeps S > 0 rows, and Adam's 1-based step number [1, 1] (float32).
struct OptimizerStepOperands {
  TensorId param = -1;        // input
  TensorId grad = -1;         // weight
  TensorId state = -1;        // bias; -1 when S = 0
  TensorId step_number = -1;  // aux; -1 for sgd
  TensorId output = -1;
};
OptimizerStepOperands optimizer_step_operands(const Op& op);

// loss and loss_grad: predictions [M, C]; cross_entropy's int32 labels [M] or mse's targets [M, C] (the
// other one is -1 whatever its slot holds: the loss function decides which is read); the optional
// float32 row weights [M]; out [1, 1] (loss) or [M, C] (loss_grad).
struct LossOperands {
  TensorId predictions = -1;  // input
  TensorId labels = -1;       // indices, cross_entropy only
  TensorId targets = -1;      // weight, mse only
  TensorId row_weights = -1;  // aux; -1 when every row weighs 1
  TensorId output = -1;
};
LossOperands loss_operands(const Op& op);  // loss or loss_grad

// segment_matmul in its three forms (op_graph.hpp, OpShape): input [M, K], int32 offsets [S + 1], and
// `weight` the per-segment weights [S, K, N] (transpose_weight: [S, N, K]) or, with transpose_input,
// the gradient [M, N] of the forward's output.
struct SegmentMatmulOperands {
  TensorId input = -1;
  TensorId offsets = -1;  // indices
  TensorId weight = -1;
  TensorId output = -1;
};
SegmentMatmulOperands segment_matmul_operands(const Op& op);

// binary: out = left (op) right, right [other_rows, other_groups] broadcast over left [M, F] (BinaryFn).
struct BinaryOperands {
  TensorId left = -1;   // input
  TensorId right = -1;  // weight
  TensorId output = -1;
};
BinaryOperands binary_operands(const Op& op);

}  // namespace tilesim
