#pragma once
// The torch-cpu peer's training step: the model run the way a PyTorch training loop runs it. Parameters
// become leaf tensors that require grad; the forward ops and the loss are recorded by autograd as PyG
// calls them (autograd_ops.hpp); loss.backward() computes every gradient; the graph's gradient ops (GAT's
// block mask) act on autograd's gradients; torch::optim::Adam or SGD, configured from each update op and
// given the optimizer state of the step's inputs, updates the parameters. The whole step is timed, phase
// by phase, and checked (training_checks.hpp). No libtorch here (see torch_ops.hpp).
#include "ir/op_graph.hpp"
#include "ir/tensor_values.hpp"
#include "results/backend.hpp"

namespace tilesim::kernels::torch_peer {

// Runs the training step `graph` (is_training_graph) on `inputs`: options.warmup untimed and
// options.repeats timed repeats of the whole step, each from the same parameters and optimizer state
// (so a run is a pure function of its inputs, like every backend's). Appends one row per phase to
// result.ops ("torch.forward", "torch.loss (..)", "torch.backward (autograd)", "torch.optimizer (..)",
// each with OpResult::phase set, its median time and its check) and adds their times to result.time_s.
// `outputs` is cleared, then holds the last repeat's values: every forward op's output, the loss, each
// parameter's autograd gradient (at the graph's gradient tensor), the gradient ops' outputs and each
// optimizer_step's output [1 + S, P] (the updated parameter, then torch's optimizer state).
// Throws std::invalid_argument naming the op for a graph it cannot run (training_graph.hpp) or values
// that do not match a tensor's shape, and std::runtime_error naming the op when an ATen call fails.
// Ops torch ran are verified under `accumulation` (accumulation_probe.hpp).
void run_training_step(const OpGraph& graph, const TensorValues& inputs, const RunOptions& options, BackendResult& result,
                       TensorValues& outputs, const reference::Accumulation& accumulation = {});

}  // namespace tilesim::kernels::torch_peer
