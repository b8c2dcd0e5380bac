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
  double loss_scale = 1;           // a half model's static loss scale (1: none)
  bool active() const { return loss >= 0; }
};

// The loss rows of a mini-batch, given by its loader instead of drawn over the whole graph
// (workloads/loaders/): for a node task the output rows the loss reads (the seed nodes of a sampled
// neighbourhood, the training nodes of a cluster batch); for a graph task the pooled rows are the batch's
// graphs. Each loss row's label or target is drawn for its key (the node or graph of the full dataset,
// streams::KeyedStream), so an item has the same label in every batch. Weights, when given, are the
// loss's row weights (0 for a padding row of a fixed-size batch, 1 otherwise).
struct GivenReadout {
  std::vector<std::int32_t> rows;   // node tasks: the rows of the model's output in the loss
  std::vector<std::uint64_t> keys;  // one per loss row
  std::vector<float> weights;       // empty, or one per loss row
};

// The nodes of a graph of n nodes in the training mask of `train_fraction` (round(fraction * n), at least
// 1), ascending: the same set whether the whole graph is one step or mini-batches draw from it.
std::vector<std::int32_t> training_nodes(std::uint64_t seed, std::int64_t n, double train_fraction);

// Lowers `model` over node features "x" and the training step of `spec` on top. Trained parameters
// are the model's uniform and block-diagonal inputs (weights, biases, attention vectors). A half model
// (l.value_dtype float16 or bfloat16) trains in mixed precision: its parameters are float32 master
// weights, each cast to the model dtype by an op "<param>.cast" in its layer; the half predictions are
// cast to float32 ("loss.input_cast") for the float32 loss and loss_grad; the loss gradient is scaled by
// spec.loss_scale and cast to the model dtype ("loss.grad.scaled_cast") for the backward pass; each
// parameter's gradient comes back through the backward of its cast, a cast to float32 times
// 1 / loss_scale; the updates, optimizer state and Adam's step number are float32. A GAT
// attention matrix of several heads has its gradient masked to the diagonal blocks, so that only the
// entries of PyG's [1, H, C] parameter change. Throws InputError naming `spec_path` for a task the graph
// cannot carry (a graph task on a graph without a batch vector).
TrainingLayout lower_training_step(layers::Lowering& l, const std::vector<layers::InputFill>& fills,
                                   const std::vector<layers::LayerSpec>& model, std::int64_t num_features,
                                   const TrainSpec& spec, std::uint64_t seed, const std::string& spec_path,
                                   const GivenReadout* given = nullptr);

// Moves the updated parameters, optimizer state and step number of a finished step (`outputs`, the
// backend's computed tensors) into `inputs` for the next step.
void advance_step(const TrainingLayout& layout, const TensorValues& outputs, TensorValues& inputs);

}  // namespace tilesim::workloads::training
