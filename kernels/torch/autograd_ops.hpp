#pragma once
// The forward ops of a training step as the torch-cpu peer records them for autograd: each op the
// ATen call PyTorch Geometric makes, out of place (or in place on a fresh zeros tensor, as PyG's
// scatter does), so that loss.backward() differentiates the step as it would a PyG model's. Includes
// ATen: only the peer's training files include this header (torch_backend.hpp and torch_ops.hpp keep
// libtorch out of everything else).
#include <ATen/ATen.h>

#include "ir/op_graph.hpp"

namespace tilesim::kernels::torch_peer {

// An op's operands as tensors, shaped as their graph tensors are; integer indices and labels as int64
// (PyG's edge_index and targets are int64). Undefined where the op has no such operand.
struct OperandTensors {
  at::Tensor input, indices, weight, bias;
  at::Tensor aux;  // the loss's row weights [M] (Op::aux); the update's step number is read on the host
};

// out = the op's value, recorded by autograd when an operand requires grad. Forward kinds (gather, the
// scatter family, degree_count, untransposed matmul and segment_matmul, unary, binary); an op marked `detach` reads its
// operands detached (PyG's softmax takes the max of src.detach()). Throws std::invalid_argument naming
// the op for another kind.
at::Tensor record_op(const Op& op, const OperandTensors& operands);

// The loss op: cross_entropy (int64 labels) or mse_loss, mean reduction: the 0-dimensional
// tensor loss.backward() starts from. With row weights (operands.aux) the per-row losses of
// reduction='none' times the weights, summed and divided by their sum (mse: C times it), as a PyTorch
// loop weighs a padded batch's rows; autograd differentiates that as written.
at::Tensor record_loss(const Op& op, const OperandTensors& operands);

}  // namespace tilesim::kernels::torch_peer
