#include "models/gpu/gpu_backend.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common/error.hpp"
#include "models/gpu/eager_timeline.hpp"

namespace tilesim::gpu {

GpuModelBackend::GpuModelBackend(GpuMachine machine, GpuMode mode, std::string name, bool grad_mode)
    : machine_(std::move(machine)), mode_(mode), name_(std::move(name)), grad_mode_(grad_mode) {}

void GpuModelBackend::prepare(const OpGraph& graph) {
  if (mode_ == GpuMode::eager && !grad_mode_)
    for (const Op& op : graph.ops)
      if (op.phase != OpPhase::forward)
        throw InputError("backend " + name_ + ": op '" + op.name + "' is part of a training step, which needs grad mode; "
                         "eager-nograd models a forward under torch.no_grad() (use :eager)");
  const auto steps = foreach_steps(graph);
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    if (!is_value_dtype(op.dtype)) {
      throw InputError("", "ops." + op.name + ".dtype", "float32, float16 or bfloat16 (the GPU model's value types)", to_string(op.dtype));
    }
    // A shape the model cannot take (a size below 1) is the workload's error, said before anything runs.
    try {
      const auto step = steps.find(i);
      (void)predict_op(op, machine_, mode_, step == steps.end() ? nullptr : &step->second);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("backend ") + name_ + ": " + e.what());
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
  // torch.optim updates a step's parameters together: each optimizer_step op learns its companions.
  const auto steps = foreach_steps(graph);
  std::vector<GpuPrediction> predictions;
  predictions.reserve(graph.ops.size());
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    // Only shapes are read, so an op fed by an earlier op's output (a chained graph) needs no values.
    const auto step = steps.find(i);
    predictions.push_back(predict_op(graph.ops[i], machine_, mode_, step == steps.end() ? nullptr : &step->second));
  }
  // Eager: the graph as back-to-back iterations of eager PyTorch (host and GPU overlapping, the
  // layers' Python and autograd included); kernel: each op's kernels.
  EagerTimeline timeline;
  if (mode_ == GpuMode::eager) timeline = eager_timeline(graph, predictions, machine_, grad_mode_);
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const GpuPrediction& p = predictions[i];
    OpResult row = OpResult::for_op(graph.ops[i]);
    row.time_s = mode_ == GpuMode::eager ? timeline.op_time_s[i] : p.time_s;
    row.bytes_by_level = {{"hbm_bytes", std::llround(p.hbm_bytes)}, {"l2_bytes", std::llround(p.l2_bytes)}};
    row.verification = "modeled: no outputs computed";
    row.plan = p.to_json();
    if (mode_ == GpuMode::eager) row.plan["eager_host_s"] = timeline.op_host_s[i];
    result.time_s += row.time_s;
    result.ops.push_back(std::move(row));
  }
  result.host = {{"mode", to_string(mode_)},
                 {"machine_file", machine_.file},
                 {"fit_carried_over_from", machine_.fit_carried_over_from},
                 // The software stack the host figures and the training step's optimizer stand for.
                 {"framework",
                  {{"pytorch", machine_.framework.pytorch},
                   {"host_cpu", machine_.framework.host_cpu},
                   {"optimizer", GpuMachine::Framework::word(machine_.framework.optimizer)},
                   {"zero_grad", GpuMachine::Framework::zero_grad_word(machine_.framework.zero_grad_fills)}}},
                 {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
  if (mode_ == GpuMode::eager) result.host["eager"] = timeline.to_json();
  return result;
}

}  // namespace tilesim::gpu
