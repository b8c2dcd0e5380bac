// Cross-backend agreement (runs/agreement.hpp): a half gradient from a backend that keeps the dtype's
// matmul partial sums in it is reported with its difference and judged by no tolerance; the same
// difference between backends that add in float32 is a disagreement.
#include <catch2/catch.hpp>

#include "runs/agreement.hpp"

using namespace tilesim;

namespace {

// One backward-phase op: a bfloat16 gradient (the product of two earlier outputs) cast to float32.
struct HalfGradient {
  OpGraph graph;
  TensorId grad = -1;
  HalfGradient() {
    const TensorId g = graph.add_tensor({"w.grad_bf16", {4, 3}, DType::bfloat16});
    Op cast;
    cast.name = "w.cast.grad";
    cast.kind = OpKind::cast;
    cast.input = g;
    cast.dtype = DType::float32;
    cast.shape.num_inputs = 4;
    cast.shape.num_features = 3;
    cast.phase = OpPhase::backward;
    grad = graph.add_op(cast);
    // The cast's input is another op's output (here a stand-in op producing it).
    Op produce;
    produce.name = "w.grad";
    produce.kind = OpKind::unary;
    produce.unary = UnaryFn::relu;
    produce.dtype = DType::bfloat16;
    produce.shape.num_inputs = 4;
    produce.shape.num_features = 3;
    produce.phase = OpPhase::backward;
    produce.input = graph.add_tensor({"h", {4, 3}, DType::bfloat16});
    produce.output = g;
    graph.ops.insert(graph.ops.begin(), produce);
  }
};

}  // namespace

TEST_CASE("agreement: a half gradient summed in the half dtype is reported, not judged, summed in float32 it must agree",
          "[unit]") {
  HalfGradient h;
  TensorValues a, b, inputs;
  std::vector<float> va(12, 0.5f), vb(12, 0.5f);
  vb[7] = 0.75f;  // far outside 32 u(bfloat16) of the largest magnitude
  a.set_f32(h.grad, va, DType::float32);
  b.set_f32(h.grad, vb, DType::float32);
  reference::Accumulation in_dtype;
  in_dtype.bfloat16 = reference::DotAccumulation::in_dtype;

  bool all_agree = true;
  const nlohmann::json summed_in_dtype = runs::op_agreements(h.graph, inputs, {{"cpu", &a, {}}, {"torch-cpu", &b, in_dtype}}, all_agree);
  REQUIRE(summed_in_dtype.size() == 1);
  CHECK(summed_in_dtype[0]["outputs_equal"].is_null());
  CHECK(summed_in_dtype[0]["max_abs_difference"] == Approx(0.25));
  CHECK(summed_in_dtype[0]["detail"].get<std::string>().find("partial sums kept in bfloat16") != std::string::npos);
  CHECK(all_agree);

  const nlohmann::json summed_in_float32 = runs::op_agreements(h.graph, inputs, {{"cpu", &a, {}}, {"torch-cpu", &b, {}}}, all_agree);
  REQUIRE(summed_in_float32.size() == 1);
  CHECK(summed_in_float32[0]["outputs_equal"] == false);
  CHECK_FALSE(all_agree);
}
