// torch-cpu: the peer, the same ops through libtorch's ATen kernels (kernels/torch), measured on this
// host; built when CMake finds libtorch.
#include "backends/families.hpp"
#include "backends/host_measured_family.hpp"
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

class TorchCpuFamily final : public HostMeasuredFamily {
 public:
  TorchCpuFamily() : HostMeasuredFamily(torch_cpu_info(), "PyTorch CPU (measured)", "PyTorch ATen on CPU") {}

  Availability availability(bool) const override {
    Availability a;
    a.optional = true;
    a.built = kernels::torch_peer::built_in();
    a.detail = kernels::torch_peer::description();
    return a;
  }

  std::unique_ptr<Backend> make(const BackendSpec&) const override { return kernels::torch_peer::make_backend(); }
};

}  // namespace

const BackendFamily& torch_cpu_family() {
  static const TorchCpuFamily family;
  return family;
}

}  // namespace tilesim::backends
