// cpu: tilesim's own kernels (kernels/cpu), measured on this host.
#include <iomanip>
#include <sstream>

#include "backends/families.hpp"
#include "backends/machine_ceilings.hpp"
#include "common/error.hpp"
#include "kernels/cpu/cpu_backend.hpp"

namespace tilesim::backends {

namespace {

FamilyInfo cpu_info() {
  FamilyInfo i;
  i.family = "cpu";
  i.grammar = "cpu";
  i.kind = ResultKind::measured;
  i.summary = "real OpenMP, vectorised kernels on this host in float32, float16 and bfloat16 (oneDNN for the matmuls, "
              "its kernel chosen by cpuid), timed after warm-up calls (median of the timed calls)";
  i.help = "cpu";
  i.accepted = "cpu";
  i.unchecked_verified = "no";
  i.roofline_machine_family = "cpu";
  i.roofline_machine_form = "cpu:FILE";
  i.runs_training_steps = true;
  return i;
}

class CpuFamily final : public BackendFamily {
 public:
  CpuFamily() : BackendFamily(cpu_info()) {}

  MachineChoice machine_choice() const override {
    MachineChoice m;
    m.runs_on = "this host's cores";
    return m;
  }

  BackendSpec parse(const std::string& item, const std::string&) const override {
    if (item.find(':') != std::string::npos)
      throw InputError("", "--backends", "cpu without a machine name", "\"" + item + "\"");
    BackendSpec spec;
    spec.descriptor = this;
    return spec;
  }

  std::unique_ptr<Backend> make(const BackendSpec&) const override { return std::make_unique<kernels::cpu::CpuBackend>(); }

  std::string row_mode(const BackendSpec&, const TimingSettings& timing) const override {
    return "median-of-" + std::to_string(timing.timed_calls);
  }

  std::string plan_text(const BackendSpec&, const TimingSettings& timing) const override {
    return "measured, median of " + std::to_string(timing.timed_calls) + " calls after " + std::to_string(timing.warmup) +
           " warm-up";
  }

  std::optional<std::string> display_label(const std::string& name, const std::string&, const std::string&) const override {
    if (name != "cpu") return std::nullopt;
    return "CPU (measured)";
  }

  RooflineMachine ceilings(const BackendSpec&, const std::string& backend, const std::string& machine) const override {
    return host_cpu_ceilings(backend, machine, "CPU");
  }

  std::string machine_table(const nlohmann::json&) const override {
    std::ostringstream line;
    line << std::left << std::setw(14) << "cpu" << "this host's cores (measured, OpenMP)\n";
    return line.str();
  }
};

}  // namespace

const BackendFamily& cpu_family() {
  static const CpuFamily family;
  return family;
}

}  // namespace tilesim::backends
