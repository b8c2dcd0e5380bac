// cpu: tilesim's own kernels (kernels/cpu), measured on this host.
#include <iomanip>
#include <sstream>

#include "backends/families.hpp"
#include "backends/host_measured_family.hpp"
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

class CpuFamily final : public HostMeasuredFamily {
 public:
  CpuFamily() : HostMeasuredFamily(cpu_info(), "CPU (measured)", "CPU") {}

  std::unique_ptr<Backend> make(const BackendSpec&) const override { return std::make_unique<kernels::cpu::CpuBackend>(); }

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
