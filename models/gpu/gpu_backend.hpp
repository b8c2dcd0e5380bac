#pragma once
// The analytic GPU model as a backend: each op of the graph is predicted by models/gpu/gpu_model.hpp
// (predict_op) for the machine file and mode the backend was named with, from shapes alone, so chained
// graphs (ops reading earlier ops' outputs) run as they are. Results are labelled "modeled"; no output
// is computed, so nothing is verified.
//   gpu-model:a100-40gb        kernel mode (device time of the kernels)
//   gpu-model:a100-40gb:eager  eager mode (one eager PyTorch call per op, host floor included), grad mode
//   gpu-model:a100-40gb:eager-nograd  the same under torch.no_grad() (no autograd bookkeeping)
#include <string>

#include "models/gpu/gpu_machine.hpp"
#include "models/gpu/gpu_model.hpp"
#include "results/backend.hpp"

namespace tilesim::gpu {

class GpuModelBackend : public Backend {
 public:
  // grad_mode (eager only): the forward records autograd history, as PyTorch does outside torch.no_grad().
  GpuModelBackend(GpuMachine machine, GpuMode mode, std::string name, bool grad_mode = true);
  std::string name() const override { return name_; }
  // Checks every op's dtype and sizes can be modeled; throws tilesim::InputError when one cannot.
  void prepare(const OpGraph& graph) override;
  // Inputs are not read (a model computes no outputs); options do not apply.
  BackendResult run(const OpGraph& graph, const TensorValues& inputs, const RunOptions& options) override;
  const GpuMachine& machine() const { return machine_; }
  GpuMode mode() const { return mode_; }
  bool grad_mode() const { return grad_mode_; }
  nlohmann::json machine_provenance() const override { return machine_.provenance.to_json(); }

 private:
  GpuMachine machine_;
  GpuMode mode_;
  std::string name_;
  bool grad_mode_ = true;
};

}  // namespace tilesim::gpu
