// torch-cpu: the peer, the same ops through libtorch's ATen kernels (kernels/torch), measured on this
// host; built when CMake finds libtorch.
#include "backends/families.hpp"
#include "backends/machine_ceilings.hpp"
#include "common/error.hpp"
#include "kernels/torch/torch_backend.hpp"

namespace tilesim::backends {

namespace {

FamilyInfo torch_cpu_info() {
  FamilyInfo i;
  i.family = "torch-cpu";
  i.grammar = "torch-cpu";
  i.kind = ResultKind::measured;
  i.summary = "the peer: the same ops through PyTorch's ATen kernels (libtorch), in the same process on the same data, "
              "timed like cpu";
  i.help = "torch-cpu";
  i.accepted = "torch-cpu";
  i.unchecked_verified = "no";
  // Training steps through libtorch's autograd and torch::optim (kernels/torch/torch_training.hpp).
  i.runs_training_steps = true;
  i.roofline_machine_family = "cpu";  // the same host's ceilings as cpu
  return i;
}

class TorchCpuFamily final : public BackendFamily {
 public:
  TorchCpuFamily() : BackendFamily(torch_cpu_info()) {}

  MachineChoice machine_choice() const override {
    MachineChoice m;
    m.runs_on = "this host's cores";
    return m;
  }

  Availability availability(bool) const override {
    Availability a;
    a.optional = true;
    a.built = kernels::torch_peer::built_in();
    a.detail = kernels::torch_peer::description();
    return a;
  }

  BackendSpec parse(const std::string& item, const std::string&) const override {
    if (item.find(':') != std::string::npos)
      throw InputError("", "--backends", "torch-cpu without a machine name", "\"" + item + "\"");
    BackendSpec spec;
    spec.descriptor = this;
    return spec;
  }

  std::unique_ptr<Backend> make(const BackendSpec&) const override { return kernels::torch_peer::make_backend(); }

  std::string row_mode(const BackendSpec&, const TimingSettings& timing) const override {
    return "median-of-" + std::to_string(timing.timed_calls);
  }

  std::string plan_text(const BackendSpec&, const TimingSettings& timing) const override {
    return "measured, median of " + std::to_string(timing.timed_calls) + " calls after " + std::to_string(timing.warmup) +
           " warm-up";
  }

  std::optional<std::string> display_label(const std::string& name, const std::string&, const std::string&) const override {
    if (name != "torch-cpu") return std::nullopt;
    return "PyTorch CPU (measured)";
  }

  RooflineMachine ceilings(const BackendSpec&, const std::string& backend, const std::string& machine) const override {
    return host_cpu_ceilings(backend, machine, "PyTorch ATen on CPU");
  }
};

}  // namespace

const BackendFamily& torch_cpu_family() {
  static const TorchCpuFamily family;
  return family;
}

}  // namespace tilesim::backends
