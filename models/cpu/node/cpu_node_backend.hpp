#pragma once
// The described CPU node as a backend (`cpu-model:spr-2s`): each op of the graph, forward or training
// (loss, backward, optimizer), is predicted from its shapes by cpu_op_model.hpp; nothing is computed,
// so results are "modeled" and unverified. A cluster file (`cpu-model:spr-cluster`) runs as one of its
// nodes (the step of one node; a "parallel" section spreads it, runs/scaling_run).
#include <string>

#include "models/cpu/node/cpu_node.hpp"
#include "results/backend.hpp"

namespace tilesim::cpu_model {

class CpuNodeBackend : public Backend {
 public:
  // cluster: the cluster file's name when the node was reached through one ("" for a node file).
  CpuNodeBackend(CpuNode node, std::string name, std::string cluster = "");
  std::string name() const override { return name_; }
  // Checks every op's dtype and sizes can be modeled; throws tilesim::InputError when one cannot.
  void prepare(const OpGraph& graph) override;
  BackendResult run(const OpGraph& graph, const TensorValues& inputs, const RunOptions& options) override;
  nlohmann::json machine_provenance() const override { return node_.provenance.to_json(); }
  const CpuNode& node() const { return node_; }
  // What results name as the machine: the node, or "CLUSTER (one NODE node)".
  std::string machine_name() const { return cluster_.empty() ? node_.name : cluster_ + " (one " + node_.name + " node)"; }

 private:
  CpuNode node_;
  std::string name_;
  std::string cluster_;
};

}  // namespace tilesim::cpu_model
