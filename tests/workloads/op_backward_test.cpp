// Each differentiable op kind's backward, one op at a time (tests/support/op_backward_cases.hpp): the graph the
// autodiff appends, evaluated by the reference, gives every element of every parameter's gradient
// equal to the central finite difference of the loss. The layer-level checks are in tests/workloads/autodiff_test.cpp;
// the same cases against libtorch's autograd in tests/torch/torch_backend_test.cpp.
#include <cmath>

#include <catch2/catch.hpp>

#include "ir/operands.hpp"
#include "ir/reference/reference.hpp"
#include "tests/support/op_backward_cases.hpp"

using namespace tilesim;

namespace {

// Ops [0, end) by the reference, outputs into `values`; the loss in double.
double evaluate(const tilesim_test::OpBackwardCase& c, TensorValues& values, std::size_t end) {
  double loss = 0;
  for (std::size_t k = 0; k < end; ++k) {
    const Op& op = c.graph.ops[k];
    if (op.output == c.loss) loss = reference::expect(op, resolve_operands(op, values)).value.at(0);
    values.set_f32(op.output, reference::compute(op, values));
  }
  return loss;
}

}  // namespace

TEST_CASE("each op kind's backward equals central finite differences of the reference's loss", "[training][autodiff][unit]") {
  const auto cases = tilesim_test::op_backward_cases();
  // gather, three scatters, matmul, segment_matmul, a matmul under each weighted loss, a scaled cast, 13
  // unary functions, 4 binary functions x 4 shapes of the other operand.
  CHECK(cases.size() == 1 + 3 + 1 + 1 + 2 + 1 + 13 + 16);
  for (const auto& c : cases) {
    INFO(c.name);
    TensorValues values = c.values;
    evaluate(c, values, c.graph.ops.size());
    // Every op of the step, the backward and update ones included, within the reference's bound.
    for (const Op& op : c.graph.ops) {
      INFO(op.name);
      CHECK(reference::verify(op, values, values.f32(op.output)).ok);
    }
    REQUIRE_FALSE(c.grads.empty());
    for (const auto& [param, grad_tensor] : c.grads) {
      const std::vector<float>& grad = values.f32(grad_tensor);
      const std::vector<float>& p = c.values.f32(param);
      REQUIRE(grad.size() == p.size());
      bool some_nonzero = false;
      for (std::size_t i = 0; i < p.size(); ++i) {
        const float h = 1.0f / 256;
        TensorValues up = c.values, down = c.values;
        up.mutable_f32(param)[i] = p[i] + h;
        down.mutable_f32(param)[i] = p[i] - h;
        const double fd = (evaluate(c, up, c.forward_end) - evaluate(c, down, c.forward_end)) /
                          (static_cast<double>(p[i] + h) - static_cast<double>(p[i] - h));
        INFO(c.graph.tensor(param).name << "[" << i << "]: backward " << grad[i] << ", finite difference " << fd);
        CHECK(std::fabs(fd - grad[i]) <= 1e-3 + 0.01 * std::fabs(fd));
        some_nonzero = some_nonzero || grad[i] != 0;
      }
      CHECK(some_nonzero);
    }
  }
}
