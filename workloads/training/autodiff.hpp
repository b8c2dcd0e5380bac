#pragma once
// Reverse-mode differentiation of an op graph, as ops: the backward pass of a forward graph appended to
// the same graph, each forward op's gradient lowered the way PyTorch's autograd computes it for the
// ATen call the forward uses (rules at each kind in autodiff.cpp). Index tensors and inputs outside
// `requires_grad` get no gradient; an op marked `detach` passes none back (PyG's softmax max).
#include <cstddef>
#include <map>
#include <set>

#include "ir/op_graph.hpp"

namespace tilesim::workloads::training {

// Appends the backward of ops [0, forward_end) of `graph`, given `output_grad`, the gradient of the
// forward tensor `output` (same shape). Returns the gradient tensor of every tensor of `requires_grad`
// that `output` depends on. Backward ops have phase backward, `grad_of` their forward op and names
// "<forward op>.grad[.<operand>]"; each layer's backward ops form a group "<layer>.grad". Throws
// std::invalid_argument for a forward op whose backward is not lowered (a transposed matmul or
// segment_matmul, a training kind). segment_matmul's backward is pyg_lib's: the input's gradient a
// segment_matmul of the output's gradient with the weight transposed, the weight's gradient a
// segment_matmul with transpose_input (x_s^T @ g_s per segment); the offsets get none. A cast's backward
// (tensor.to(dtype)'s) is a cast of the gradient back to the input's dtype with the same factor; every
// backward op computes in the dtype of what it reads, so a half model's gradients are half until a cast
// takes them back to its float32 master weights. `requires_grad_scale` multiplies the gradients of the
// `requires_grad` tensors, folded into the casts that read them (loss scaling's 1 / scale, exact for a
// power of two); with a scale other than 1, a requires_grad tensor read by an op other than a cast is a
// lowering defect (std::logic_error).
std::map<TensorId, TensorId> append_backward(OpGraph& graph, std::size_t forward_end, TensorId output, TensorId output_grad,
                                             const std::set<TensorId>& requires_grad, double requires_grad_scale = 1.0);

}  // namespace tilesim::workloads::training
