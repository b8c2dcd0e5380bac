#include "ir/op_operands.hpp"

#include <stdexcept>

namespace tilesim {

namespace {

// A view asked of an op of another kind is a bug in the caller, not bad input.
void require_kind(const Op& op, bool matches, const char* kinds) {
  if (!matches) throw std::logic_error("op '" + op.name + "': " + to_string(op.kind) + ", not the " + kinds + " this view is for");
}

}  // namespace

OptimizerStepOperands optimizer_step_operands(const Op& op) {
  require_kind(op, op.kind == OpKind::optimizer_step, "optimizer_step");
  return {op.input, op.weight, op.optimizer_state(), op.step_number(), op.output};
}

LossOperands loss_operands(const Op& op) {
  require_kind(op, op.kind == OpKind::loss || op.kind == OpKind::loss_grad, "loss or loss_grad");
  const bool cross_entropy = op.loss == LossFn::cross_entropy;
  return {op.input, cross_entropy ? op.indices : -1, cross_entropy ? -1 : op.weight, op.loss_row_weights(), op.output};
}

SegmentMatmulOperands segment_matmul_operands(const Op& op) {
  require_kind(op, op.kind == OpKind::segment_matmul, "segment_matmul");
  return {op.input, op.segment_offsets(), op.weight, op.output};
}

BinaryOperands binary_operands(const Op& op) {
  require_kind(op, op.kind == OpKind::binary, "binary");
  return {op.input, op.binary_other(), op.output};
}

}  // namespace tilesim
