#include "analysis/stage_split.hpp"

#include <algorithm>
#include <set>

#include "workloads/training/train_spec.hpp"

namespace tilesim::analysis {

namespace {

std::size_t stage_of_name(const std::string& name, const std::map<std::string, std::size_t>& layer_stage, std::size_t last) {
  const auto it = layer_stage.find(name.substr(0, name.find('.')));
  return it == layer_stage.end() ? last : it->second;
}

}  // namespace

std::map<std::string, std::size_t> stage_of_ops(const OpGraph& graph, const std::vector<std::vector<std::string>>& stages) {
  std::map<std::string, std::size_t> layer_stage;
  for (std::size_t s = 0; s < stages.size(); ++s)
    for (const auto& layer : stages[s]) layer_stage[layer] = s;
  const std::size_t last = stages.empty() ? 0 : stages.size() - 1;
  std::map<std::string, std::size_t> of;
  for (const Op& op : graph.ops) of[op.name] = stage_of_name(op.name, layer_stage, last);
  return of;
}

std::vector<StageSeconds> stage_seconds(const OpGraph& graph, const BackendResult& step, const std::map<std::string, std::size_t>& stage_of,
                                        std::size_t stages) {
  std::map<std::string, OpPhase> phase_of;
  for (const Op& op : graph.ops) phase_of[op.name] = op.phase;
  std::vector<StageSeconds> out(std::max<std::size_t>(stages, 1));
  for (const OpResult& row : step.ops) {
    OpPhase phase = OpPhase::forward;
    std::size_t s = out.size() - 1;
    if (row.phase) {
      phase = *row.phase;
    } else {
      if (const auto p = phase_of.find(row.op); p != phase_of.end()) phase = p->second;
      if (const auto st = stage_of.find(row.op); st != stage_of.end()) s = st->second;
    }
    StageSeconds& t = out[s];
    switch (phase) {
      case OpPhase::forward:
      case OpPhase::loss: t.forward_s += row.time_s; break;
      case OpPhase::backward: t.backward_s += row.time_s; break;
      case OpPhase::optimizer: t.optimizer_s += row.time_s; break;
    }
  }
  return out;
}

std::vector<std::int64_t> boundary_bytes(const OpGraph& graph, const std::map<std::string, std::size_t>& stage_of, std::size_t stages) {
  // The stage each forward tensor is written in.
  std::map<TensorId, std::size_t> written_in;
  for (const Op& op : graph.ops)
    if (op.phase == OpPhase::forward) written_in[op.output] = stage_of.at(op.name);
  // The last stage that reads each such tensor in its forward (or loss).
  std::map<TensorId, std::size_t> last_reader;
  for (const Op& op : graph.ops) {
    if (op.phase != OpPhase::forward && op.phase != OpPhase::loss) continue;
    const std::size_t s = stage_of.at(op.name);
    for (TensorId t : {op.input, op.weight, op.bias, op.indices, op.aux}) {
      if (t < 0 || !written_in.count(t)) continue;
      last_reader[t] = std::max(last_reader[t], s);
    }
  }
  std::vector<std::int64_t> bytes(stages > 0 ? stages - 1 : 0, 0);
  // A tensor written in stage w and read up to stage r crosses every boundary from w to r - 1 (a stage
  // passes on what a later stage needs).
  for (const auto& [t, r] : last_reader)
    for (std::size_t b = written_in.at(t); b < r && b < bytes.size(); ++b) bytes[b] += graph.tensor(t).bytes();
  return bytes;
}

std::vector<StageMemory> stage_memory(const OpGraph& graph, const workloads::training::TrainingLayout& layout,
                                      const std::map<std::string, std::size_t>& stage_of, std::size_t stages) {
  std::vector<StageMemory> out(std::max<std::size_t>(stages, 1));
  std::map<std::string, std::size_t> layer_stage;  // a parameter's stage: the stage of the ops that step it
  for (const Op& op : graph.ops)
    if (op.phase == OpPhase::optimizer && op.input >= 0) layer_stage[graph.tensor(op.input).name] = stage_of.at(op.name);
  const std::int64_t master_bytes = dtype_bytes(workloads::training::kMasterWeightDType);
  if (!layout.active()) {
    // Inference: the weights and biases the dense ops read, graph inputs in the model's dtype.
    std::set<TensorId> written, counted;
    for (const Op& op : graph.ops) written.insert(op.output);
    for (const Op& op : graph.ops) {
      // A bias add is a binary op whose other operand is one broadcast row.
      const bool bias_add = op.kind == OpKind::binary && op.shape.other_rows == 1;
      if (op.kind != OpKind::matmul && op.kind != OpKind::segment_matmul && !bias_add) continue;
      for (TensorId t : {op.weight, op.bias})
        if (t >= 0 && !written.count(t) && counted.insert(t).second) out[stage_of.at(op.name)].parameter_bytes += graph.tensor(t).bytes();
    }
  }
  for (const auto& slot : layout.parameters) {
    const auto it = layer_stage.find(graph.tensor(slot.param).name);
    StageMemory& m = out[it == layer_stage.end() ? out.size() - 1 : it->second];
    const std::int64_t elements = graph.tensor(slot.param).elements();
    m.parameter_bytes += elements * master_bytes;
    m.gradient_bytes += elements * master_bytes;
    m.gradient_tensor_bytes.push_back(elements * master_bytes);
    if (slot.state >= 0) m.optimizer_state_bytes += graph.tensor(slot.state).elements() * master_bytes;
  }
  if (layout.active()) {
    // Forward outputs a backward op reads: what a stage keeps per micro-batch until its backward.
    std::map<TensorId, std::size_t> forward_output;
    for (const Op& op : graph.ops)
      if (op.phase == OpPhase::forward) forward_output[op.output] = stage_of.at(op.name);
    std::map<TensorId, std::size_t> kept;
    for (const Op& op : graph.ops) {
      if (op.phase != OpPhase::backward && op.phase != OpPhase::loss) continue;
      for (TensorId t : {op.input, op.weight, op.bias, op.aux})
        if (t >= 0 && forward_output.count(t)) kept[t] = forward_output[t];
    }
    for (const auto& [t, s] : kept) out[s].activation_bytes_per_micro_batch += graph.tensor(t).bytes();
  } else {
    for (const Op& op : graph.ops) {
      StageMemory& m = out[stage_of.at(op.name)];
      m.activation_bytes_per_micro_batch = std::max(m.activation_bytes_per_micro_batch, graph.tensor(op.output).bytes());
    }
  }
  return out;
}

}  // namespace tilesim::analysis
