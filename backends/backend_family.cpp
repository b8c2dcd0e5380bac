#include "backends/backend_family.hpp"

#include "backends/system_view.hpp"
#include "common/error.hpp"

#include "kernels/cpu/cpu_backend.hpp"

namespace tilesim::backends {

std::string BackendFamily::default_mode() const {
  for (const auto& m : info_.modes)
    if (m.is_default) return m.name;
  return "";
}

Availability BackendFamily::availability(bool probe_device) const {
  (void)probe_device;
  return {};
}

// Kernels measured on this host, by default: the host's processor.
std::string BackendFamily::machine_name(const Backend& backend) const {
  (void)backend;
  return kernels::cpu::host_description();
}

std::unique_ptr<SystemView> BackendFamily::system_view(const BackendSpec& spec) const {
  throw InputError("", "--backends",
                   "backends of systems for a workload with a \"parallel\" section (ipu:pod16, ipu:pod64, ipu:bow-2000, "
                   "gpu-model:dgx-a100, cpu-model:spr-cluster, or one device of those families)",
                   spec.name());
}

StepMemoryFitter BackendFamily::step_memory_fitter(const BackendSpec& spec) const {
  throw InputError("", "--backend", "one simulated IPU backend (ipu:MACHINE): fit searches its planner's memory accounting", spec.name());
}

SingleOpModel BackendFamily::single_op_model(const BackendSpec& spec) const {
  throw InputError("", "backend", "a backend that predicts single gathers and scatters of the measured grids (ipu, gpu-model)",
                   spec.name());
}

EpochExecutionModel BackendFamily::epoch_execution_model(const BackendSpec& spec) const {
  (void)spec;
  return {};
}

}  // namespace tilesim::backends
