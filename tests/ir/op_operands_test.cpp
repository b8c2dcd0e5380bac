// The per-kind operand views (ir/op_operands.hpp): each returns the tensors the op's builders put in
// its generic slots, by role, and refuses an op of another kind by name.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "ir/op_operands.hpp"
#include "tests/support/graph_case.hpp"
#include "workloads/layers/layers.hpp"

using namespace tilesim;

namespace {

// An op of `kind` over [rows, cols] values, named as the view errors quote it.
Op op_operands_test_op(const std::string& name, OpKind kind, std::int64_t rows, std::int64_t cols) {
  return tilesim_test::op_of_kind(name, kind, rows, cols);
}

std::vector<float> op_operands_test_zeros(std::int64_t n) { return std::vector<float>(static_cast<std::size_t>(n), 0.0f); }

}  // namespace

TEST_CASE("operand views: an optimizer step's parameter, gradient, state and step number by role", "[ir][operands][unit]") {
  tilesim_test::GraphCase c;
  Op step = op_operands_test_op("w.step", OpKind::optimizer_step, 2, 3);
  step.optimizer.kind = OptimizerSpec::Kind::adam;
  step.phase = OpPhase::optimizer;
  step.input = c.f32("w", {2, 3}, op_operands_test_zeros(6));
  step.weight = c.f32("w.grad", {2, 3}, op_operands_test_zeros(6));
  step.set_optimizer_state(c.f32("w.state", {2, 6}, op_operands_test_zeros(12)));
  step.set_step_number(c.f32("step", {1, 1}, {1.0f}));
  const Op added = c.add(step);
  const OptimizerStepOperands operands = optimizer_step_operands(added);
  CHECK(operands.param == added.input);
  CHECK(operands.grad == added.weight);
  CHECK(operands.state == added.bias);
  CHECK(operands.step_number == added.aux);
  CHECK(operands.output == added.output);
  CHECK(c.graph.tensor(operands.state).name == "w.state");
  CHECK(c.graph.tensor(operands.step_number).name == "step");

  Op sgd = op_operands_test_op("b.step", OpKind::optimizer_step, 1, 3);
  sgd.input = c.f32("b", {1, 3}, op_operands_test_zeros(3));
  sgd.weight = c.f32("b.grad", {1, 3}, op_operands_test_zeros(3));
  const OptimizerStepOperands plain = optimizer_step_operands(c.add(sgd));
  CHECK((plain.state == -1 && plain.step_number == -1));
}

TEST_CASE("operand views: a loss reads its labels or its targets as its loss function says, and its row weights",
          "[ir][operands][unit]") {
  tilesim_test::GraphCase c;
  for (const OpKind kind : {OpKind::loss, OpKind::loss_grad}) {
    const std::string name = to_string(kind);
    Op ce = op_operands_test_op(name + ".ce", kind, 2, 3);
    ce.loss = LossFn::cross_entropy;
    ce.input = c.f32(name + ".ce.x", {2, 3}, op_operands_test_zeros(6));
    ce.indices = c.i32(name + ".ce.labels", {0, 2});
    ce.set_loss_row_weights(c.f32(name + ".ce.w", {2}, {1.0f, 0.0f}));
    const Op ce_added = c.add(ce);
    const LossOperands ce_operands = loss_operands(ce_added);
    CHECK(ce_operands.predictions == ce_added.input);
    CHECK(ce_operands.labels == ce_added.indices);
    CHECK(ce_operands.targets == -1);
    CHECK(ce_operands.row_weights == ce_added.aux);
    CHECK(ce_operands.output == ce_added.output);

    Op mse = op_operands_test_op(name + ".mse", kind, 2, 3);
    mse.loss = LossFn::mse;
    mse.input = c.f32(name + ".mse.x", {2, 3}, op_operands_test_zeros(6));
    mse.weight = c.f32(name + ".mse.t", {2, 3}, op_operands_test_zeros(6));
    const Op mse_added = c.add(mse);
    const LossOperands mse_operands = loss_operands(mse_added);
    CHECK(mse_operands.predictions == mse_added.input);
    CHECK(mse_operands.labels == -1);
    CHECK(mse_operands.targets == mse_added.weight);
    CHECK(mse_operands.row_weights == -1);
  }
}

TEST_CASE("operand views: segment_matmul and binary as the layer builders make them", "[ir][operands][unit]") {
  tilesim_test::GraphCase c;
  const TensorId x = c.f32("x", {4, 2}, op_operands_test_zeros(8));
  const TensorId offsets = c.i32("offsets", {0, 1, 4});
  const TensorId weights = c.f32("weights", {2, 2, 5}, op_operands_test_zeros(20));
  const Op segmented = c.add(workloads::layers::segment_matmul("segmented", c.graph, x, offsets, weights));
  const SegmentMatmulOperands s = segment_matmul_operands(segmented);
  CHECK((s.input == x && s.offsets == offsets && s.weight == weights && s.output == segmented.output));

  const TensorId bias_row = c.f32("bias_row", {1, 2}, op_operands_test_zeros(2));
  const Op added = c.add(workloads::layers::binary("added", c.graph, BinaryFn::add, x, bias_row));
  const BinaryOperands b = binary_operands(added);
  CHECK((b.left == x && b.right == bias_row && b.output == added.output));
}

TEST_CASE("operand views: an op of another kind is refused, naming the op and its kind", "[ir][operands][unit]") {
  const Op gather = op_operands_test_op("lookup", OpKind::gather, 4, 2);
  CHECK_THROWS_WITH(optimizer_step_operands(gather), Catch::Contains("op 'lookup'") && Catch::Contains("gather") &&
                                                          Catch::Contains("optimizer_step"));
  CHECK_THROWS_AS(loss_operands(op_operands_test_op("step", OpKind::optimizer_step, 1, 1)), std::logic_error);
  CHECK_THROWS_AS(segment_matmul_operands(op_operands_test_op("mm", OpKind::matmul, 1, 1)), std::logic_error);
  CHECK_THROWS_WITH(binary_operands(op_operands_test_op("f", OpKind::unary, 1, 1)), Catch::Contains("op 'f'") && Catch::Contains("unary"));
}
