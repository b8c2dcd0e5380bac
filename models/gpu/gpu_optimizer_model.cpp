// torch.optim's update on CUDA as the machine's software stack runs it (GpuMachine::framework):
//   per_parameter_loop  PyTorch 1.x's default (foreach=False): step() loops over the parameters and
//          makes 1 to 9 single-tensor ATen calls for each (torch/optim/adam.py _single_tensor_adam,
//          torch/optim/sgd.py _single_tensor_sgd in 1.13; torch/optim/_functional.py in 1.8), one
//          kernel each;
//   foreach  PyTorch 2.x's default on CUDA tensors (torch/optim/optimizer.py,
//          _default_to_fused_or_foreach): a fixed list of torch._foreach_* calls over all parameters at
//          once (_multi_tensor_adam, _multi_tensor_sgd), each one multi_tensor_apply kernel that takes
//          many tensors per launch.
// Around the update, each parameter's gradient passes through optimizer.zero_grad() and autograd's
// AccumulateGrad node: with set_to_none=False (1.x's default) zero_grad fills it with zeros (one
// zero_ per parameter) and AccumulateGrad adds the new gradient into it (one in-place add); with
// set_to_none (2.x) neither launches a kernel. Both are charged here, to the parameter's
// optimizer_step op, since the op graph has no op of its own for them.
//
// The op graph has one optimizer_step op per parameter, so the step is charged like this:
//   bytes  every op moves its own parameter's elements through every kernel (the memory term is linear
//          in bytes, so the ops' memory times add up to the step's);
//   launches  per_parameter_loop: every op launches its own calls; foreach: the op at position 0 of
//          its ForeachStep pays every launch of the step (multi_tensor_apply packs the tensors into
//          launches, below), the others none;
//   host (eager)  position 0 pays optimizer_step_call (step()'s Python beyond its ATen calls), and
//          with foreach one aten_call per foreach call; every op pays optimizer_per_parameter (its
//          state lookups, step counter and bias corrections), with the loop its own ATen calls, and
//          its zero_grad and AccumulateGrad work.
// Modeled: the steady state (step >= 2), weight decay as torch.optim's L2 term, no maximize, amsgrad,
// nesterov or dampening.
#include <cmath>
#include <map>
#include <stdexcept>
#include <vector>

#include "models/gpu/gpu_kernel_list.hpp"

namespace tilesim::gpu {

namespace {

// One call of a step (a torch._foreach_* call, or one single-tensor ATen call of the per-parameter
// loop): its kernel, the bytes it moves per parameter element (4-byte values: each operand read once,
// the result written once; addcmul's grads, passed twice, come from memory once) and, for foreach, how
// many tensor lists its kernel takes (which bounds the tensors per launch).
struct ForeachCall {
  const char* name;
  double bytes_per_element;
  int lists;
  bool scalar_list;  // a per-tensor list of scalars rides in the launch argument too (fewer tensors fit)
};

std::vector<ForeachCall> foreach_calls(const OptimizerSpec& o) {
  std::vector<ForeachCall> calls;
  // grads = torch._foreach_add(grads, params, alpha=weight_decay): out of place, three lists.
  if (o.weight_decay != 0) calls.push_back({"foreach_add_weight_decay", 12, 3, false});
  if (o.kind == OptimizerSpec::Kind::adam) {
    // _multi_tensor_adam: lerp_ the first moment; mul_ and addcmul_ the second; sqrt (out of place),
    // div_ by the bias corrections (a scalar list) and add_ eps for the denominator; addcdiv_ the step
    // (step sizes as a scalar list). The step counters are CPU tensors: no kernel.
    calls.push_back({"foreach_lerp_exp_avg", 12, 2, false});
    calls.push_back({"foreach_mul_exp_avg_sq", 8, 1, false});
    calls.push_back({"foreach_addcmul_exp_avg_sq", 12, 3, false});
    calls.push_back({"foreach_sqrt_denominator", 8, 2, false});
    calls.push_back({"foreach_div_bias_correction", 8, 1, true});
    calls.push_back({"foreach_add_eps", 8, 1, false});
    calls.push_back({"foreach_addcdiv_params", 16, 3, true});
    return calls;
  }
  // _multi_tensor_sgd: with momentum, bufs.mul_(momentum) then bufs.add_(grads) (every buffer exists
  // after the first step); then params.add_(bufs or grads, alpha=-lr).
  if (o.momentum != 0) {
    calls.push_back({"foreach_mul_momentum", 8, 1, false});
    calls.push_back({"foreach_add_momentum", 12, 2, false});
  }
  calls.push_back({"foreach_add_params", 12, 2, false});
  return calls;
}

// The loop's calls for one parameter, as PyTorch 1.13's _single_tensor_adam and _single_tensor_sgd
// make them (1.8's torch/optim/_functional.py makes the same ones); the step counter and the bias
// corrections are host arithmetic (a CPU tensor in 1.13, a Python int in 1.8): no kernel.
std::vector<ForeachCall> loop_calls(const OptimizerSpec& o) {
  std::vector<ForeachCall> calls;
  // grad = grad.add(param, alpha=weight_decay): out of place.
  if (o.weight_decay != 0) calls.push_back({"add_weight_decay", 12, 0, false});
  if (o.kind == OptimizerSpec::Kind::adam) {
    // exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1); exp_avg_sq.mul_(beta2).addcmul_(grad, grad,
    // value=1 - beta2); denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps);
    // param.addcdiv_(exp_avg, denom, value=-step_size).
    calls.push_back({"mul_exp_avg", 8, 0, false});
    calls.push_back({"add_exp_avg", 12, 0, false});
    calls.push_back({"mul_exp_avg_sq", 8, 0, false});
    calls.push_back({"addcmul_exp_avg_sq", 12, 0, false});
    calls.push_back({"sqrt_denominator", 8, 0, false});
    calls.push_back({"div_bias_correction", 8, 0, false});
    calls.push_back({"add_eps", 8, 0, false});
    calls.push_back({"addcdiv_param", 16, 0, false});
    return calls;
  }
  // buf.mul_(momentum).add_(grad) (every buffer exists after the first step); param.add_(buf or grad,
  // alpha=-lr).
  if (o.momentum != 0) {
    calls.push_back({"mul_momentum", 8, 0, false});
    calls.push_back({"add_momentum", 12, 0, false});
  }
  calls.push_back({"add_param", 12, 0, false});
  return calls;
}

// Tensors one multi_tensor_apply launch takes, by the number of tensor lists: its argument block is
// limited to 4 KB (ATen/native/cuda/MultiTensorApply.cuh, depth_to_max_tensors and
// depth_to_max_tensors_scalarlist).
int max_tensors_per_launch(const ForeachCall& call) {
  static const int plain[5] = {110, 64, 48, 36, 30};
  static const int with_scalars[5] = {96, 64, 48, 36, 30};
  if (call.lists < 1 || call.lists > 5) throw std::logic_error("max_tensors_per_launch: 1 to 5 tensor lists");
  return call.scalar_list ? with_scalars[call.lists - 1] : plain[call.lists - 1];
}

// Launches of one multi_tensor_apply over tensors of these sizes, as its host loop makes them
// (MultiTensorApply.cuh): each tensor is cut into chunks of kChunkSize = 65536 elements, one block
// each; a launch goes out when it holds max_tensors tensors (at a tensor's last chunk), when it holds
// depth_to_max_blocks = 320 chunks, or at the last chunk of the last tensor. A tensor cut by a full
// launch continues in the next one.
double multi_tensor_launches(const std::vector<std::int64_t>& elements, int max_tensors) {
  constexpr std::int64_t chunk_elements = 65536, max_blocks = 320;
  double launches = 0;
  int tensors = 0;
  std::int64_t blocks = 0;
  for (std::size_t t = 0; t < elements.size(); ++t) {
    if (elements[t] < 1) continue;
    ++tensors;
    const std::int64_t chunks = (elements[t] + chunk_elements - 1) / chunk_elements;
    for (std::int64_t c = 0; c < chunks; ++c) {
      ++blocks;
      const bool tensors_full = tensors == max_tensors && c == chunks - 1;
      const bool blocks_full = blocks == max_blocks;
      const bool last = t + 1 == elements.size() && c == chunks - 1;
      if (tensors_full || blocks_full || last) {
        launches += 1;
        blocks = 0;
        tensors = c == chunks - 1 ? 0 : 1;
      }
    }
  }
  return launches;
}

bool same_settings(const OptimizerSpec& a, const OptimizerSpec& b) {
  return a.kind == b.kind && a.lr == b.lr && a.momentum == b.momentum && a.weight_decay == b.weight_decay &&
         a.beta1 == b.beta1 && a.beta2 == b.beta2 && a.eps == b.eps;
}

}  // namespace

std::map<std::size_t, ForeachStep> foreach_steps(const OpGraph& graph) {
  // torch.optim groups one optimizer's parameters by device and dtype and updates each group with one
  // set of foreach calls; here an optimizer is a set of equal settings.
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    if (op.kind != OpKind::optimizer_step) continue;
    auto it = groups.begin();
    for (; it != groups.end(); ++it) {
      const Op& first = graph.ops[it->front()];
      if (first.dtype == op.dtype && same_settings(first.optimizer, op.optimizer)) break;
    }
    if (it == groups.end())
      groups.push_back({i});
    else
      it->push_back(i);
  }
  std::map<std::size_t, ForeachStep> steps;
  for (const auto& group : groups) {
    ForeachStep step;
    for (std::size_t i : group) step.parameter_elements.push_back(graph.ops[i].shape.num_inputs * graph.ops[i].shape.num_features);
    for (std::size_t k = 0; k < group.size(); ++k) {
      step.position = k;
      steps.emplace(group[k], step);
    }
  }
  return steps;
}

HostSide model_optimizer_step(const Op& op, const ForeachStep& step, const GpuMachine& m, GpuPrediction& p) {
  const std::int64_t elements = op.shape.num_inputs * op.shape.num_features;
  if (step.position >= step.parameter_elements.size() || step.parameter_elements[step.position] != elements)
    throw std::invalid_argument("GPU model: op '" + op.name + "': its foreach step does not list its parameter's " +
                                std::to_string(elements) + " elements at its position");
  const bool loop = m.framework.optimizer == GpuMachine::Framework::Optimizer::per_parameter_loop;
  const bool fills = m.framework.zero_grad_fills;
  const auto calls = loop ? loop_calls(op.optimizer) : foreach_calls(op.optimizer);
  const double value_bytes = static_cast<double>(dtype_bytes(op.dtype));
  const double parameter_elements = static_cast<double>(elements);
  double step_elements = 0;
  for (std::int64_t e : step.parameter_elements) step_elements += static_cast<double>(e);

  p.call = "torch.optim." + std::string(op.optimizer.kind == OptimizerSpec::Kind::adam ? "Adam" : "SGD") + " step() (" +
           (loop ? "a loop of single-tensor calls per parameter" : "foreach") + "): this parameter's share; zero_grad (" +
           (fills ? "zeros" : "set to None") + ") and AccumulateGrad (" + (fills ? "adds into the zeros" : "takes the gradient") + ")";
  p.flops = op.flops();
  // The tensors the kernels touch together: the loop's calls run over one parameter at a time, the
  // foreach calls over all of them at once. Parameter, gradient and state rows, plus the
  // weight-decayed gradients and Adam's denominators.
  const double temporaries = (op.optimizer.weight_decay != 0 ? 1.0 : 0.0) + (op.optimizer.kind == OptimizerSpec::Kind::adam ? 1.0 : 0.0);
  p.footprint_bytes = (loop ? parameter_elements : step_elements) * value_bytes *
                      (2.0 + static_cast<double>(op.optimizer.state_rows()) + temporaries);
  p.l2_hit_fraction = l2_hit_fraction(p.footprint_bytes, static_cast<double>(m.l2_bytes));
  KernelList ks(m, p.l2_hit_fraction);
  const double per_call_compute_s = p.flops / static_cast<double>(calls.size()) / peak_flops_per_s(op.dtype, m);
  const bool first = step.position == 0;
  // zero_grad's zero_ (the gradient written) and AccumulateGrad's in-place add (gradient and new
  // gradient read, the sum written), both before the update in the step.
  if (fills) {
    ks.add_launched("zero_grad_fill", 1, parameter_elements * value_bytes, {});
    ks.add_launched("accumulate_grad_add", 1, parameter_elements * 3.0 * value_bytes, {});
  }
  for (const ForeachCall& call : calls) {
    const double launches = loop ? 1.0 : first ? multi_tensor_launches(step.parameter_elements, max_tensors_per_launch(call)) : 0.0;
    ks.add_launched(call.name, launches, parameter_elements * call.bytes_per_element, {{"compute", per_call_compute_s}});
  }
  ks.finish(p);
  double host_s = m.eager.optimizer_per_parameter_s;
  if (loop) host_s += static_cast<double>(calls.size()) * m.eager.aten_call_s;
  if (first) host_s += m.eager.optimizer_step_call_s + (loop ? 0.0 : static_cast<double>(calls.size()) * m.eager.aten_call_s);
  // zero_grad: requires_grad_(False) on the gradient, then zero_ (a fill); or the assignment of None.
  // AccumulateGrad: a backward node, which with a zeroed gradient makes the add's ATen call.
  host_s += m.eager.aten_view_call_s + (fills ? m.eager.aten_call_s : 0.0);
  host_s += m.eager.autograd_backward_node_s + (fills ? m.eager.aten_call_s : 0.0);
  return {host_s, true};
}

}  // namespace tilesim::gpu
