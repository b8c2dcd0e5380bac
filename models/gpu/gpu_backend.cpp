#include "models/gpu/gpu_backend.hpp"

#include <chrono>
#include <cmath>

#include "common/error.hpp"

namespace tilesim::gpu {

GpuModelBackend::GpuModelBackend(GpuMachine machine, GpuMode mode, std::string name)
    : machine_(std::move(machine)), mode_(mode), name_(std::move(name)) {}

void GpuModelBackend::prepare(const OpGraph& graph) {
  for (const Op& op : graph.ops) {
    if (op.dtype != DType::float32) {
      throw InputError("", "ops." + op.name + ".dtype", "float32 (the GPU model's value type)", to_string(op.dtype));
    }
  }
}

BackendResult GpuModelBackend::run(const OpGraph& graph, const TensorValues& inputs, const RunOptions& options) {
  (void)inputs;
  (void)options;
  const auto t0 = std::chrono::steady_clock::now();
  BackendResult result;
  result.backend = name_;
  result.kind = ResultKind::modeled;
  result.machine = machine_.name;
  for (const Op& op : graph.ops) {
    const GpuOp gpu_op = gpu_op_for(op.kind);
    const GpuPrediction p = predict(gpu_op, op.shape, op.dtype, machine_, mode_);
    OpResult row;
    row.op = op.name;
    row.op_kind = op.kind;
    row.shape = op.shape;
    row.dtype = op.dtype;
    row.time_s = p.time_s;
    row.flops = op.flops();
    row.min_bytes = op.min_bytes();
    row.bytes_by_level = {{"hbm_bytes", std::llround(p.hbm_bytes)}, {"l2_bytes", std::llround(p.l2_bytes)}};
    row.verification = "modeled: no outputs computed";
    row.plan = p.to_json();
    row.plan["gpu_op"] = to_string(gpu_op);
    result.time_s += row.time_s;
    result.ops.push_back(std::move(row));
  }
  result.host = {{"mode", to_string(mode_)},
                 {"machine_file", machine_.file},
                 {"fit_carried_over_from", machine_.fit_carried_over_from},
                 {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
  return result;
}

}  // namespace tilesim::gpu
