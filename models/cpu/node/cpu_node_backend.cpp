#include "models/cpu/node/cpu_node_backend.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "common/error.hpp"
#include "models/cpu/node/cpu_op_model.hpp"

namespace tilesim::cpu_model {

CpuNodeBackend::CpuNodeBackend(CpuNode node, std::string name, std::string cluster)
    : node_(std::move(node)), name_(std::move(name)), cluster_(std::move(cluster)) {}

void CpuNodeBackend::prepare(const OpGraph& graph) {
  for (const Op& op : graph.ops) {
    if (!is_value_dtype(op.dtype))
      throw InputError("", "ops." + op.name + ".dtype", "float32, float16 or bfloat16 (the CPU model's value types)", to_string(op.dtype));
    try {
      (void)predict_cpu_op(op, node_);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("backend ") + name_ + ": " + e.what());
    }
  }
}

BackendResult CpuNodeBackend::run(const OpGraph& graph, const TensorValues& inputs, const RunOptions& options) {
  // A model reads shapes only: no input values, and no run option applies.
  (void)inputs;
  (void)options;
  const auto t0 = std::chrono::steady_clock::now();
  BackendResult result;
  result.backend = name_;
  result.kind = ResultKind::modeled;
  result.machine = machine_name();
  for (const Op& op : graph.ops) {
    const CpuOpPrediction p = predict_cpu_op(op, node_);
    OpResult row = OpResult::for_op(op);
    row.time_s = p.time_s;
    row.bytes_by_level = {{"dram_bytes", std::llround(p.bytes)}};
    row.verification = "modeled: no outputs computed";
    row.plan = p.to_json();
    result.time_s += row.time_s;
    result.ops.push_back(std::move(row));
  }
  result.host = {{"machine_file", node_.file},
                 {"node", node_.name},
                 {"node_memory_bytes", node_.memory_bytes},
                 {"derived", node_.derived_json()},
                 {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
  if (!cluster_.empty()) result.host["cluster"] = cluster_;
  return result;
}

}  // namespace tilesim::cpu_model
