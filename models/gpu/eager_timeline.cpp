#include "models/gpu/eager_timeline.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "ir/op_operands.hpp"
#include "models/gpu/eager_calls.hpp"
#include "models/gpu/gpu_machine.hpp"

namespace tilesim::gpu {

namespace {

// Tensors that are module parameters in PyG: a Linear's weight and bias, a segment matmul's weights,
// a bias row added on its own.
void add_parameters(const Op& op, std::set<TensorId>& requires_grad) {
  if (op.kind == OpKind::matmul || op.kind == OpKind::segment_matmul) {
    if (op.weight >= 0) requires_grad.insert(op.weight);
    if (op.bias >= 0) requires_grad.insert(op.bias);
  }
  if (op.kind == OpKind::binary && op.shape.other_rows == 1) {
    const TensorId bias_row = binary_operands(op).right;
    if (bias_row >= 0) requires_grad.insert(bias_row);
  }
}

bool reads_grad(const Op& op, const std::set<TensorId>& requires_grad) {
  for (TensorId t : {op.input, op.weight, op.bias})
    if (t >= 0 && requires_grad.count(t)) return true;
  return false;
}

// The autograd nodes a loss op records (the calls on the path from the predictions to the loss):
// cross entropy log_softmax and nll_loss; mse one mse_loss; with row weights also the product with the
// weights, its sum and the division (the weights' own sum and clamp take no gradient).
int loss_autograd_nodes(const Op& op) {
  const int plain = op.loss == LossFn::cross_entropy ? 2 : 1;
  return op.loss_row_weights() >= 0 ? plain + 3 + (op.loss == LossFn::mse ? 1 : 0) : plain;
}

}  // namespace

nlohmann::json EagerTimeline::to_json() const {
  return {{"model", "back-to-back iterations: max(host, device) per stretch between calls that wait for the GPU"},
          {"host_s", host_s},
          {"device_s", device_s},
          {"total_s", total_s},
          {"bound", host_s >= device_s ? "host" : "device"},
          {"grad_mode", grad_mode},
          {"backward_nodes", backward_nodes},
          {"recorded_calls", eager_record().calls_file},
          {"layers", layers}};
}

EagerTimeline eager_timeline(const OpGraph& graph, const std::vector<GpuPrediction>& predictions, const GpuMachine& machine,
                             bool grad_mode) {
  EagerTimeline t;
  t.grad_mode = grad_mode;
  const std::size_t n = graph.ops.size();
  t.op_time_s.assign(n, 0.0);
  t.op_host_s.assign(n, 0.0);
  // Python around each forward layer, charged to the layer's first op.
  const auto& layers = eager_record().layers;
  for (const OpGroup& g : graph.groups) {
    if (g.phase != OpPhase::forward || g.op_count == 0 || g.first_op >= n) continue;
    const auto it = layers.find(g.kind);
    if (it == layers.end()) continue;
    const double python_s = it->second.module_calls * machine.eager.module_call_s +
                            it->second.propagate_calls * machine.eager.propagate_call_s;
    t.op_host_s[g.first_op] += python_s;
    t.layers.push_back({{"group", g.name},
                        {"kind", g.kind},
                        {"module_calls", it->second.module_calls},
                        {"propagate_calls", it->second.propagate_calls},
                        {"python_s", python_s}});
  }
  std::set<TensorId> requires_grad;
  for (const Op& op : graph.ops) add_parameters(op, requires_grad);
  // Mixed precision: a forward cast of a graph input (a tensor no op writes) is autocast's cast of a
  // float32 master parameter, an autograd node of its own.
  std::set<TensorId> written;
  for (const Op& op : graph.ops) written.insert(op.output);
  for (const Op& op : graph.ops)
    if (op.kind == OpKind::cast && op.phase == OpPhase::forward && op.input >= 0 && written.count(op.input) == 0)
      requires_grad.insert(op.input);

  // Autograd's backward nodes: every call the forward recorded is a node the backward runs, each at
  // autograd_backward_node beyond its ATen calls, charged to the first backward op computing a
  // gradient of that forward op (grad_of). Parameters' AccumulateGrad nodes are the optimizer's
  // (gpu_optimizer_model.cpp).
  std::map<std::string, int> backward_nodes;
  std::set<std::string> nodes_charged;

  // Stretches of overlapping host and device work, closed by a call that waits for the GPU.
  std::size_t stretch_start = 0;
  double stretch_host = 0, stretch_device = 0;
  auto close_stretch = [&](std::size_t end) {
    const bool host_bound = stretch_host >= stretch_device;
    for (std::size_t i = stretch_start; i < end; ++i) t.op_time_s[i] = host_bound ? t.op_host_s[i] : predictions[i].kernel_s;
    t.total_s += std::max(stretch_host, stretch_device);
    stretch_host = stretch_device = 0;
    stretch_start = end;
  };
  for (std::size_t i = 0; i < n; ++i) {
    const Op& op = graph.ops[i];
    const GpuPrediction& p = predictions[i];
    double host = p.host_floor_s;
    if (grad_mode && op.phase == OpPhase::forward && reads_grad(op, requires_grad)) {
      const int nodes = std::max(1, p.python_kernel_calls);
      host += nodes * machine.eager.autograd_node_s;
      backward_nodes[op.name] += nodes;
      if (op.output >= 0 && !op.detach) requires_grad.insert(op.output);
    }
    if (grad_mode && op.kind == OpKind::loss && reads_grad(op, requires_grad)) {
      const int nodes = loss_autograd_nodes(op);
      host += nodes * machine.eager.autograd_node_s;
      backward_nodes["loss"] += nodes;
    }
    if (op.phase != OpPhase::forward && !op.grad_of.empty() && nodes_charged.insert(op.grad_of).second) {
      const auto it = backward_nodes.find(op.grad_of);
      if (it != backward_nodes.end()) {
        host += it->second * machine.eager.autograd_backward_node_s;
        t.backward_nodes += it->second;
      }
    }
    t.op_host_s[i] += host;
    t.host_s += t.op_host_s[i];
    t.device_s += p.kernel_s;
    if (p.host_waits_for_device) {
      close_stretch(i);
      t.op_time_s[i] = t.op_host_s[i] + p.kernel_s;
      t.total_s += t.op_time_s[i];
      stretch_start = i + 1;
      continue;
    }
    stretch_host += t.op_host_s[i];
    stretch_device += p.kernel_s;
  }
  close_stretch(n);
  return t;
}

}  // namespace tilesim::gpu
