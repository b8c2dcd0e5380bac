#pragma once
// The references of the op kinds a training step adds (unary_grad, sum_to, loss, loss_grad,
// optimizer_step), called by reference::expect. Same contract as the forward kinds (reference.hpp):
// values in double from the float32 operands, and per element how far a correct float32 implementation
// may be from them, with the reasoning beside each bound.
#include "ir/reference/reference.hpp"

namespace tilesim::reference::training {

OpExpectation unary_grad(const Op& op, const Operands& operands);
OpExpectation sum_to(const Op& op, const Operands& operands);
OpExpectation loss(const Op& op, const Operands& operands);
OpExpectation loss_grad(const Op& op, const Operands& operands);
OpExpectation optimizer_step(const Op& op, const Operands& operands);

// f'(x) exactly (double), as torch's backward formulas define it at the kinks (relu and leaky_relu
// take the x <= 0 branch at 0; softplus is 1 above torch's threshold 20).
double unary_derivative(UnaryFn fn, double scalar, double x);

}  // namespace tilesim::reference::training
