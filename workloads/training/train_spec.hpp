#pragma once
// The "train" section of a model workload (format in docs/workload-format.md, "Training"): what a
// training step computes after the model's forward pass (the task's readout and loss) and how the
// parameters are updated (the optimizer), strictly validated.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/op_graph.hpp"

namespace tilesim::workloads::training {

struct TrainSpec {
  enum class Task { node, graph };
  enum class Pool { add, mean };  // graph tasks: PyG global_add_pool / global_mean_pool over the batch vector
  Task task = Task::node;
  LossFn loss = LossFn::cross_entropy;
  double train_fraction = 1;      // node tasks: the share of nodes in the training mask
  Pool pool = Pool::add;
  bool pool_given = false;        // the section gave "pool"
  // The model ends in a "pool" layer and linear layers on its graph rows (a readout MLP): the loss reads
  // the model's rows as they are and the section pools nothing. Set by the workload reader, which
  // refuses a "pool" here beside such a model and a node task for it.
  bool model_pools = false;
  OptimizerSpec optimizer;
  std::int64_t steps = 1;
  bool recompute = false;         // recompute activations in the backward pass (the simulated IPU's SRAM)
  // "loss_scale": static loss scaling of a half model's step (PopTorch's static scaling; torch.amp's
  // GradScaler without its growth and skipped steps): the float32 loss gradient is multiplied by it before
  // its cast to the model dtype, and each parameter's gradient by its inverse after the cast back to the
  // float32 master weights. A power of two, so both multiplies are exact. Unset: the model dtype's
  // default (default_loss_scale), filled in by the workload reader.
  std::optional<double> loss_scale;
};

std::string to_string(TrainSpec::Task task);
std::string to_string(TrainSpec::Pool pool);

// The largest loss scale a train section may ask for: 2^24, far beyond what a float16 gradient's
// range leaves room for (its largest value is 65504), and within float32's exact powers of two.
inline constexpr double kMaxLossScale = 16777216.0;
// The loss scale a model of `model_dtype` trains with when its train section gives none: 1024 for
// float16 (Graphcore's PopTorch examples train half models with a static scale of this order; float16's
// 5-bit exponent flushes gradients below 2^-24 to zero, and scaling the loss by 2^10 moves them into its
// range, while one of a GNN's larger gradients, times 2^10, still stays well below 65504), 1 for bfloat16
// (float32's 8-bit exponent: its gradients do not underflow, and torch.amp trains bfloat16 without a
// GradScaler) and for float32 (no half gradients to guard).
double default_loss_scale(DType model_dtype);
// The master weights' dtype: the trained parameters and the optimizer state of every model are float32
// (a half model's forward and backward passes read float16 or bfloat16 casts of them).
inline constexpr DType kMasterWeightDType = DType::float32;

// Parses the object at `json_path` of `file`. Throws tilesim::InputError naming the file, the JSON path,
// what was expected and what was found; unknown keys (including another optimizer's) are errors. A
// "loss_scale" is checked for its form here (a power of two in [1, kMaxLossScale]) and against the model's
// dtype by the workload reader, which fills in the default; "master_weight_dtype" may only say "float32".
TrainSpec parse_train(const nlohmann::json& object, const std::string& file, const std::string& json_path);

// The resolved section (every default filled in; "loss_scale" when resolved, and the master weights'
// dtype), as echoed in report.json: itself valid input.
nlohmann::json to_json(const TrainSpec& spec);

}  // namespace tilesim::workloads::training
