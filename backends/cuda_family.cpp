// cuda: tilesim's CUDA kernels (kernels/cuda), measured on the host's first GPU as device time
// (kernel, the default) or host time per call (per-call); built when CMake finds nvcc.
#include "backends/families.hpp"
#include "common/error.hpp"
#include "kernels/cuda/cuda_backend.hpp"

namespace tilesim::backends {

namespace {

FamilyInfo cuda_info() {
  FamilyInfo i;
  i.family = "cuda";
  i.grammar = "cuda[:kernel|:per-call]";
  i.kind = ResultKind::measured;
  i.summary = "tilesim's CUDA kernels (cuBLAS for matmul) on the first CUDA device, timed";
  i.modes = {{"kernel", true, "device time: CUDA events around each op's kernels, data on the device"},
             {"per-call", false, "what a host program waits for per call: the host clock around the launches and the "
                                 "synchronisation (launch overhead included)"}};
  i.help = "cuda[:kernel|:per-call]";
  i.accepted = "cuda, cuda:kernel|per-call";
  i.unchecked_verified = "no";
  i.runs_training_steps = true;
  return i;
}

class CudaFamily final : public BackendFamily {
 public:
  CudaFamily() : BackendFamily(cuda_info()) {}

  MachineChoice machine_choice() const override {
    MachineChoice m;
    m.runs_on = "this host's first CUDA device";
    return m;
  }

  Availability availability(bool probe_device) const override {
    Availability a;
    a.optional = true;
    a.built = kernels::cuda::built_in();
    a.detail = kernels::cuda::description();
    a.needs_device = true;
    if (probe_device && a.built) {
      const kernels::cuda::DeviceProbe device = kernels::cuda::probe_device();
      a.device_present = device.present;
      a.device = device.text;
    }
    return a;
  }

  BackendSpec parse(const std::string& item, const std::string&) const override {
    BackendSpec spec;
    spec.descriptor = this;
    const auto colon = item.find(':');
    const std::string mode = colon == std::string::npos ? "kernel" : item.substr(colon + 1);
    if (mode != "kernel" && mode != "per-call") throw InputError("", "--backends", "cuda, cuda:kernel or cuda:per-call", "\"" + item + "\"");
    spec.mode = mode;
    return spec;
  }

  std::unique_ptr<Backend> make(const BackendSpec& spec) const override {
    return kernels::cuda::make_backend(spec.mode == "per-call" ? kernels::cuda::CudaTiming::per_call : kernels::cuda::CudaTiming::kernel);
  }

  std::string row_mode(const BackendSpec& spec, const TimingSettings& timing) const override {
    return spec.mode + "-median-of-" + std::to_string(timing.timed_calls);
  }

  std::string plan_text(const BackendSpec& spec, const TimingSettings& timing) const override {
    return "measured, median of " + std::to_string(timing.timed_calls) + " calls after " + std::to_string(timing.warmup) +
           " warm-up (" + spec.mode + " time)";
  }

  // "cuda:per-call" -> "CUDA GPU (measured, per-call)".
  std::optional<std::string> display_label(const std::string& name, const std::string&, const std::string&) const override {
    return "CUDA GPU (measured, " + (name.size() > 5 ? name.substr(5) : std::string("kernel")) + ")";
  }

  // A measured GPU: tilesim has no machine file for the device it ran on.
  RooflineMachine ceilings(const BackendSpec&, const std::string& backend, const std::string&) const override {
    RooflineMachine m;
    m.backend = backend;
    m.title = "CUDA GPU (measured)";
    m.notes.push_back("no machine file describes the measured CUDA device: its points are not drawn");
    return m;
  }
};

}  // namespace

const BackendFamily& cuda_family() {
  static const CudaFamily family;
  return family;
}

}  // namespace tilesim::backends
