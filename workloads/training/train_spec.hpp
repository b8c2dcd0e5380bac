#pragma once
// The "train" section of a model workload (format in docs/workload-format.md, "Training"): what a
// training step computes after the model's forward pass (the task's readout and loss) and how the
// parameters are updated (the optimizer), strictly validated.
#include <cstdint>
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
  OptimizerSpec optimizer;
  std::int64_t steps = 1;
  bool recompute = false;         // recompute activations in the backward pass (the simulated IPU's SRAM)
};

std::string to_string(TrainSpec::Task task);
std::string to_string(TrainSpec::Pool pool);

// Parses the object at `json_path` of `file`. Throws tilesim::InputError naming the file, the JSON path,
// what was expected and what was found; unknown keys (including another optimizer's) are errors.
TrainSpec parse_train(const nlohmann::json& object, const std::string& file, const std::string& json_path);

// The resolved section (every default filled in), as echoed in report.json: itself valid input.
nlohmann::json to_json(const TrainSpec& spec);

}  // namespace tilesim::workloads::training
