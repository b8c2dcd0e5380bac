#pragma once
// A step's op graph cut into pipeline stages by layer (a workload's "parallel.pipeline.stages"): which
// stage each op belongs to, each stage's forward, backward and optimizer seconds from one backend's
// per-op rows, the activation bytes that cross each stage boundary, and what each stage's device holds
// (parameters, optimizer state, activations). Pure functions of the graph, the rows and the stages.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/op_graph.hpp"
#include "results/result.hpp"
#include "workloads/training/training_step.hpp"

namespace tilesim::analysis {

// Op name -> stage. An op belongs to the stage of the layer its name starts with ("conv1.lin",
// "conv1.lin.grad.weight", "conv1.weight.step", "conv1.weight.cast": layer "conv1"); the loss, the
// readout and any other op without a layer's prefix belong to the last stage (they follow its forward).
// Without stages (empty), every op is stage 0.
std::map<std::string, std::size_t> stage_of_ops(const OpGraph& graph, const std::vector<std::vector<std::string>>& stages);

// One stage's seconds of a step: forward (with the loss on the last stage), backward and optimizer.
struct StageSeconds {
  double forward_s = 0;
  double backward_s = 0;
  double optimizer_s = 0;
};
// Per stage, from `step`'s rows (a row standing for a whole phase, OpResult::phase, counts for the last
// stage: a backend that runs a phase as one unit gives no per-layer split).
std::vector<StageSeconds> stage_seconds(const OpGraph& graph, const BackendResult& step, const std::map<std::string, std::size_t>& stage_of,
                                        std::size_t stages);

// Bytes of the activations stage s hands to stage s + 1 (S - 1 entries): tensors a forward op of a stage
// at or before s writes and a forward (or loss) op of a later stage reads. Graph inputs (features, the
// graph's indices) are every stage's own and cross no link.
std::vector<std::int64_t> boundary_bytes(const OpGraph& graph, const std::map<std::string, std::size_t>& stage_of, std::size_t stages);

// What one stage's device holds, in bytes (modeled from the graph's tensors): the trained parameters
// and their gradients (float32 master weights), the optimizer state, and one micro-batch's activations
// (training: the forward outputs the backward reads; inference: the stage's largest forward output). An
// inference graph's parameters are the weights and bias rows its dense ops and bias adds read.
struct StageMemory {
  std::int64_t parameter_bytes = 0;
  std::int64_t gradient_bytes = 0;
  std::vector<std::int64_t> gradient_tensor_bytes;  // each trained parameter's gradient, in the layout's order
  std::int64_t optimizer_state_bytes = 0;
  std::int64_t activation_bytes_per_micro_batch = 0;
};
std::vector<StageMemory> stage_memory(const OpGraph& graph, const workloads::training::TrainingLayout& layout,
                                      const std::map<std::string, std::size_t>& stage_of, std::size_t stages);

}  // namespace tilesim::analysis
