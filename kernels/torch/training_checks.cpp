#include "kernels/torch/training_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ir/operands.hpp"
#include "ir/reference/reference.hpp"

namespace tilesim::kernels::torch_peer {
namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
}

}  // namespace

double gradient_relative_bound(DType model_dtype) {
  return is_half_dtype(model_dtype) ? 32.0 * unit_roundoff(model_dtype) : kGradientRelativeBound;
}

PhaseCheck check_ops(const OpGraph& graph, const std::vector<std::size_t>& ops, const TensorValues& inputs,
                     const TensorValues& computed, const std::string& what, const reference::Accumulation& accumulation) {
  PhaseCheck check;
  std::size_t failed = 0;
  std::string first_failure, others;
  for (std::size_t k : ops) {
    const Op& op = graph.ops.at(k);
    reference::Verification v;
    if (!computed.has(op.output)) {
      v.detail = op.name + ": torch-cpu computed no value for it";
    } else {
      v = reference::verify(op, resolve_operands(op, inputs, computed), computed.f32(op.output), accumulation);
    }
    if (v.ok) continue;
    if (failed++ == 0) first_failure = v.detail;
    else others += (others.empty() ? "" : ", ") + op.name;
  }
  check.ok = failed == 0;
  check.detail = std::to_string(ops.size()) + " " + what + ", each verified against the reference from the operands torch computed: " +
                 (check.ok ? "all within their bounds"
                           : std::to_string(failed) + " outside; first " + first_failure + (others.empty() ? "" : "; also " + others));
  return check;
}

PhaseCheck check_gradients(const OpGraph& graph, const TrainingStepPlan& plan, const TensorValues& inputs,
                           const TensorValues& computed, const reference::Accumulation& accumulation) {
  // The graph's backward from torch's forward values, so that both sides differentiate the same
  // activations (a ReLU at the edge of 0, a tie in a max, route the gradient identically).
  TensorValues produced;
  std::vector<std::size_t> recorded = plan.forward_ops;
  recorded.insert(recorded.end(), plan.loss_input_ops.begin(), plan.loss_input_ops.end());  // the loss reads them
  for (std::size_t k : recorded) {
    const TensorId out = graph.ops[k].output;
    if (computed.has(out)) produced.set_f32(out, computed.f32(out), graph.ops[k].dtype);
  }
  for (std::size_t k : plan.replaced_ops) {
    const Op& op = graph.ops[k];
    produced.set_f32(op.output, reference::compute(op, resolve_operands(op, inputs, produced)), op.dtype);
  }

  const double relative_bound = gradient_relative_bound(plan.model_dtype);
  PhaseCheck check;
  std::size_t failed = 0;
  std::string failures, worst_name;
  double worst_fraction = 0;  // largest |difference| / max|reference gradient| over every parameter
  for (const TrainedParameter& p : plan.parameters) {
    const std::string name = graph.tensor(p.param).name;
    const std::vector<float>& ref = produced.f32(p.grad);
    if (!computed.has(p.grad) || computed.f32(p.grad).size() != ref.size()) {
      ++failed;
      failures += (failures.empty() ? "" : "; ") + name + ": no autograd gradient of its size";
      continue;
    }
    const std::vector<float>& got = computed.f32(p.grad);
    double largest = 0;
    for (float r : ref) largest = std::max(largest, static_cast<double>(std::fabs(r)));
    const double bound = relative_bound * largest;
    double worst = 0;
    std::size_t worst_at = 0;
    bool nan = false;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      const double d = std::fabs(static_cast<double>(got[i]) - ref[i]);
      if (std::isnan(d)) nan = true;
      if (d > worst) {
        worst = d;
        worst_at = i;
      }
    }
    const double fraction = largest > 0 ? worst / largest : (worst > 0 ? INFINITY : 0);
    if (fraction > worst_fraction) {
      worst_fraction = fraction;
      worst_name = name;
    }
    if (!nan && worst <= bound) continue;
    ++failed;
    failures += (failures.empty() ? "" : "; ") + name + ": element " + std::to_string(worst_at) + " autograd " + number(got[worst_at]) +
                ", graph " + number(ref[worst_at]) + (nan ? " (a NaN)" : "") + ", difference " + number(worst) + " > bound " +
                number(bound);
  }
  const bool in_dtype = is_half_dtype(plan.model_dtype) && accumulation.of(plan.model_dtype) == reference::DotAccumulation::in_dtype;
  if (in_dtype) {
    check.checked = false;
    check.detail = std::to_string(plan.parameters.size()) +
                   " parameter gradients from autograd compared with the graph's loss_grad and backward ops evaluated by the "
                   "reference from torch's forward values, not checked: this host's libtorch keeps " + to_string(plan.model_dtype) +
                   " matmul partial sums in " + to_string(plan.model_dtype) +
                   " (the accumulation probe), so autograd's gradients carry rounding that grows with the rows each sums; "
                   "largest difference " + number(worst_fraction) + " of the largest magnitude" +
                   (worst_name.empty() ? "" : " (" + worst_name + ")");
    return check;
  }
  check.ok = failed == 0;
  check.detail = std::to_string(plan.parameters.size()) +
                 " parameter gradients from autograd against the graph's loss_grad and backward ops evaluated by the reference from "
                 "torch's forward values, each element within " + (is_half_dtype(plan.model_dtype) ? "32 u(" + to_string(plan.model_dtype) + ") = " + number(relative_bound) : std::string("2^-12")) +
                 " of its parameter's largest |gradient|: " +
                 (check.ok ? "all within; largest difference " + number(worst_fraction) + " of the largest magnitude" +
                                 (worst_name.empty() ? "" : " (" + worst_name + ")")
                           : std::to_string(failed) + " outside: " + failures);
  return check;
}

}  // namespace tilesim::kernels::torch_peer
