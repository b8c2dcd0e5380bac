#include "runs/agreement.hpp"

#include <algorithm>
#include <cmath>

#include "ir/reference/compare.hpp"

namespace tilesim::runs {

namespace {

// Two outputs' largest difference, unequal until a tolerance says otherwise (for an op neither backend
// holds the operands of, so the reference's bound cannot be computed).
reference::Agreement difference_only(const std::vector<float>& a, const std::vector<float>& b) {
  reference::Agreement r;
  if (a.size() != b.size()) {
    r.max_abs_difference = INFINITY;
    r.detail = "outputs of different sizes";
    return r;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (d > r.max_abs_difference || std::isnan(d)) r.max_abs_difference = d;
  }
  r.detail = "operands held by neither backend (a gradient autograd computed): no reference bound";
  return r;
}

}  // namespace

nlohmann::json op_agreements(const OpGraph& graph, const TensorValues& inputs, const std::vector<OutputsOf>& backends,
                             bool& all_agree) {
  // Cross-backend agreement: every pair of backends that computed outputs, op by op. An op that reads
  // only graph inputs sees identical operands on both backends, so both lie within the reference's bound
  // ("bound"). An op fed by earlier ops' outputs (the ops of a GNN layer) sees each backend's own
  // operands, which may differ by rounding; each backend's output was verified against its own operands
  // already, and the two are compared against the bound computed from backend a's operands (b's when a
  // did not form them all); failing that, when both formed the operands, against the reference evaluated
  // on each side's own operands (reference::compare_through_operands); failing that within a relative
  // tolerance of the output's largest magnitude ("chained"; below).
  // 1e-4 for float32 values; values computed in a half dtype (a half op's, or a cast's from one: a half
  // model's gradient cast back to its float32 master weight) round at every op of each backend's own
  // chain, so 32 units of that dtype's roundoff (2^-6 float16, 2^-3 bfloat16), as for the gradients
  // torch-cpu's autograd computes (kernels/torch/training_checks.hpp).
  auto computed_dtype = [](const Op& op) {
    return op.kind == OpKind::cast && is_half_dtype(op.input_dtype) ? op.input_dtype : op.dtype;
  };
  auto chained_relative_tolerance = [&](const Op& op) {
    const DType computed_in = computed_dtype(op);
    return is_half_dtype(computed_in) ? 32.0 * unit_roundoff(computed_in) : 1e-4;
  };
  std::vector<bool> is_output(graph.tensors.size(), false);
  for (const Op& op : graph.ops) is_output[static_cast<std::size_t>(op.output)] = true;
  auto chained = [&](const Op& op) {
    for (TensorId t : {op.input, op.indices, op.weight, op.bias, op.aux})
      if (t >= 0 && is_output[static_cast<std::size_t>(t)]) return true;
    return false;
  };
  // Whether a backend's computed values hold every operand of an op that another op produces. Not so
  // for a gradient torch-cpu's autograd computed: the graph's intermediate backward tensors it stands
  // for were never formed.
  auto holds_operands = [&](const Op& op, const TensorValues& values) {
    for (TensorId t : {op.input, op.indices, op.weight, op.bias, op.aux})
      if (t >= 0 && is_output[static_cast<std::size_t>(t)] && !values.has(t)) return false;
    return true;
  };
  nlohmann::json agreements = nlohmann::json::array();
  for (std::size_t a = 0; a < backends.size(); ++a) {
    for (std::size_t b = a + 1; b < backends.size(); ++b) {
      const TensorValues* oa = backends[a].outputs;
      const TensorValues* ob = backends[b].outputs;
      for (const Op& op : graph.ops) {
        if (!oa || !ob || !oa->has(op.output) || !ob->has(op.output)) continue;
        const bool from_outputs = chained(op);
        // A chained op's bound comes from the operands of a backend that holds them all (a first, else b);
        // when neither does, only the relative tolerance below applies.
        const TensorValues* operand_source = holds_operands(op, *oa) ? oa : holds_operands(op, *ob) ? ob : nullptr;
        const std::vector<float>& va = oa->f32(op.output);
        const std::vector<float>& vb = ob->f32(op.output);
        const reference::Accumulation& acc_a = backends[a].accumulation;
        const reference::Accumulation& acc_b = backends[b].accumulation;
        reference::Agreement agreement;
        if (!from_outputs) agreement = reference::compare_outputs(op, inputs, va, vb, acc_a, acc_b);
        else if (operand_source == oa) agreement = reference::compare_outputs(op, inputs, *oa, va, vb, acc_a, acc_b);
        else if (operand_source == ob) agreement = reference::compare_outputs(op, inputs, *ob, vb, va, acc_b, acc_a);
        else agreement = difference_only(va, vb);
        // A half gradient (or its cast to the float32 master weight) computed by a backend whose matmuls
        // keep that dtype's partial sums in it (torch-cpu's autograd on a CPU without AVX-512:
        // kernels/torch/accumulation_probe.hpp) carries rounding that grows with the rows each sum covers,
        // which no tolerance of its scale holds: the difference is reported, not judged (as torch-cpu's
        // own gradient check, kernels/torch/training_checks.hpp).
        const DType in = computed_dtype(op);
        if (op.phase == OpPhase::backward && is_half_dtype(in) &&
            (acc_a.of(in) == reference::DotAccumulation::in_dtype || acc_b.of(in) == reference::DotAccumulation::in_dtype)) {
          agreements.push_back({{"op", op.name},
                                {"backends", {backends[a].backend, backends[b].backend}},
                                {"check", "chained"},
                                {"outputs_equal", nullptr},
                                {"max_abs_difference", agreement.max_abs_difference},
                                {"detail", "not compared against a tolerance: a gradient autograd computed with " + to_string(in) +
                                               " matmul partial sums kept in " + to_string(in) + " on this host"}});
          continue;
        }
        // Both backends formed the operands: the reference on each side's own operands says how far apart
        // the outputs may lie (an op that amplifies rounding, like Adam's first update, is judged by it).
        if (from_outputs && !agreement.equal && holds_operands(op, *oa) && holds_operands(op, *ob))
          agreement = reference::compare_through_operands(op, inputs, *oa, *ob, va, vb, acc_a, acc_b);
        if (from_outputs && !agreement.equal) {
          double magnitude = 0;
          for (float v : operand_source == ob ? vb : va) magnitude = std::max(magnitude, static_cast<double>(std::abs(v)));
          if (agreement.max_abs_difference <= chained_relative_tolerance(op) * std::max(1.0, magnitude)) {
            agreement.equal = true;
            agreement.detail = "within " + std::to_string(chained_relative_tolerance(op)) +
                               " of the output's largest magnitude (operands computed by each backend)";
          }
        }
        all_agree = all_agree && agreement.equal;
        agreements.push_back({{"op", op.name},
                              {"backends", {backends[a].backend, backends[b].backend}},
                              {"check", from_outputs ? "chained" : "bound"},
                              {"outputs_equal", agreement.equal},
                              {"max_abs_difference", agreement.max_abs_difference},
                              {"detail", agreement.detail}});
      }
    }
  }
  return agreements;
}

}  // namespace tilesim::runs
