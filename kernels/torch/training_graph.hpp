#pragma once
// How the torch-cpu peer reads a training step's op graph. The peer does not run the graph's own loss
// gradient and backward ops: libtorch's autograd computes the gradients from the recorded forward ops
// and the loss, as a PyTorch training loop does. So a step splits into the forward ops and the loss
// (recorded ATen calls), what autograd replaces (the loss_grad and backward ops, which the peer's check
// evaluates through the reference instead), the optimizer-phase ops that act on a gradient before the
// update (GAT's block mask) and one torch::optim update per parameter. No libtorch here.
#include <cstddef>
#include <string>
#include <vector>

#include "ir/op_graph.hpp"

namespace tilesim::kernels::torch_peer {

// One parameter the step updates.
struct TrainedParameter {
  std::size_t step_op = 0;  // its optimizer_step op
  TensorId param = -1;      // the graph input holding it: the leaf autograd differentiates
  // The graph's gradient of it as the backward ops leave it: the tensor autograd's param.grad stands for.
  TensorId grad = -1;
  TensorId state = -1;      // the optimizer state [S, P] (-1 without)
};

struct TrainingStepPlan {
  std::vector<std::size_t> forward_ops;   // phase forward, in graph order
  // A half model's cast of its predictions to float32 before the loss (autocast runs losses in float32):
  // recorded with the loss, in the loss phase.
  std::vector<std::size_t> loss_input_ops;
  std::size_t loss_op = 0;
  // loss_grad, a half model's scaled cast of it, and the backward ops: autograd's work, in graph order.
  std::vector<std::size_t> replaced_ops;
  // A half model's static loss scale (the factor of the loss gradient's cast; 1 without one): the peer
  // differentiates loss * scale and unscales each gradient by 1 / scale, as torch.amp's GradScaler does.
  double loss_scale = 1;
  // The dtype the model's forward ops compute in (a half model's, under float32 master weights).
  DType model_dtype = DType::float32;
  std::vector<std::size_t> gradient_ops;  // optimizer-phase ops other than the updates, on gradients, in order
  std::vector<TrainedParameter> parameters;  // in the order of their optimizer_step ops
};

// Whether `graph` is a training step (it holds an op of a training kind).
bool is_training_graph(const OpGraph& graph);

// The plan of a training step. Throws std::invalid_argument "<who>: op 'NAME': ..." for a graph the
// peer cannot run this way: no loss or more than one, a forward op of a kind autograd is not given here
// (a training kind, a transposed matmul or segment_matmul), an optimizer_step whose parameter is another
// op's output, a gradient op that does not read exactly one gradient, or a loss-phase cast other than
// the loss input's and the loss gradient's.
TrainingStepPlan plan_training_step(const OpGraph& graph, const std::string& who);

}  // namespace tilesim::kernels::torch_peer
