#pragma once
// A graph's time in eager mode, as a benchmark that calls the whole graph back to back measures it.
// The host issues every call in order (Python, dispatcher, launch) while the GPU runs the kernels already
// queued, so over repeated iterations one iteration takes max(host time, device time), except across a
// call whose host side waits for the GPU (a copy to the host): there the two add up. Host time is the
// ops' own calls (their recorded or fitted floors) plus what PyG's Python adds around them: each
// forward layer's nn.Module calls and MessagePassing.propagate calls (models/gpu/eager/pyg_layers.json),
// and in grad mode (PyTorch's default, no torch.no_grad()) autograd's bookkeeping for every call whose
// inputs require grad (a module's parameters, and everything computed from them).
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/op_graph.hpp"
#include "models/gpu/gpu_model.hpp"

namespace tilesim::gpu {

struct EagerTimeline {
  std::vector<double> op_time_s;  // each op's share of the iteration: its host or its device time,
                                  // whichever bounds the stretch it is in (they sum to total_s)
  std::vector<double> op_host_s;  // each op's host time including its layer's Python and autograd
  double total_s = 0;
  double host_s = 0, device_s = 0;
  nlohmann::json to_json() const;  // host and device totals, the bound, the layers' Python overheads
  nlohmann::json layers = nlohmann::json::array();
  bool grad_mode = true;
  int backward_nodes = 0;  // autograd nodes the backward ran for forward and loss calls, each charged
                           // autograd_backward_node (a parameter's AccumulateGrad is its optimizer op's)
};

// `predictions[i]` is predict_op's eager prediction of graph.ops[i].
// grad_mode: autograd records the forward (PyTorch's default); false: under torch.no_grad().
EagerTimeline eager_timeline(const OpGraph& graph, const std::vector<GpuPrediction>& predictions, const GpuMachine& machine,
                             bool grad_mode = true);

}  // namespace tilesim::gpu
