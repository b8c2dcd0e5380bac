#pragma once
// A training step lowered into the op graph, as one program: the model's forward pass, the task's
// readout (a training mask or a pooling per graph), the loss and its gradient, the backward pass
// (autodiff.hpp) and one optimizer update per parameter. Steps after the first run the same graph
// with the updated parameters and optimizer state moved into its inputs (advance_step), as a
// compiled PopTorch training step is called once per batch.
#include <cstdint>
#include <vector>

#include "ir/op_graph.hpp"
#include "ir/tensor_values.hpp"
#include "workloads/layers/layers.hpp"
#include "workloads/training/train_spec.hpp"

namespace tilesim::workloads::training {

// One trained parameter: the graph input holding it, its gradient, its optimizer state (a graph input
// [S, P], zeros before the first step; -1 when the optimizer keeps none) and the optimizer_step output
// [1 + S, P] whose first row is the updated parameter and the rest the updated state.
struct ParameterSlot {
  TensorId param = -1;
  TensorId grad = -1;
  TensorId state = -1;
  TensorId update = -1;
};

// Where a lowered training step keeps what carries from step to step. Empty (loss -1) for inference.
struct TrainingLayout {
  TensorId loss = -1;              // [1, 1]
  TensorId step = -1;              // adam: the step number t, a [1, 1] graph input (1 before the first step)
  std::vector<ParameterSlot> parameters;
  std::int64_t steps = 0;          // the workload's steps
  bool active() const { return loss >= 0; }
};

// Lowers `model` over node features "x" and the training step of `spec` on top. Trained parameters
// are the model's uniform and block-diagonal inputs (weights, biases, attention vectors); a GAT
// attention matrix of several heads has its gradient masked to the diagonal blocks, so that only the
// entries of PyG's [1, H, C] parameter change. Throws InputError naming `spec_path` for a task the graph
// cannot carry (a graph task on a graph without a batch vector).
TrainingLayout lower_training_step(layers::Lowering& l, const std::vector<layers::InputFill>& fills,
                                   const std::vector<layers::LayerSpec>& model, std::int64_t num_features,
                                   const TrainSpec& spec, std::uint64_t seed, const std::string& spec_path);

// Moves the updated parameters, optimizer state and step number of a finished step (`outputs`, the
// backend's computed tensors) into `inputs` for the next step.
void advance_step(const TrainingLayout& layout, const TensorValues& outputs, TensorValues& inputs);

}  // namespace tilesim::workloads::training
