#pragma once
// The shared base of the families measured on this host's cores (cpu, torch-cpu): no machine in the
// name (they run on the host they are on), rows timed as the median of the timed calls after warm-up,
// and the host's measured ceilings for their rooflines. A family says only what differs: its info,
// its label and what makes its backend.
#include <string>

#include "backends/backend_family.hpp"

namespace tilesim::backends {

class HostMeasuredFamily : public BackendFamily {
 public:
  // `label`: the family in figures ("CPU (measured)"); `ceilings_what`: what runs on the host, as the
  // roofline names it ("CPU", "PyTorch ATen on CPU").
  HostMeasuredFamily(FamilyInfo info, std::string label, std::string ceilings_what);

  MachineChoice machine_choice() const override;
  BackendSpec parse(const std::string& item, const std::string& accepted_by_all) const override;
  std::string row_mode(const BackendSpec& spec, const TimingSettings& timing) const override;
  std::string plan_text(const BackendSpec& spec, const TimingSettings& timing) const override;
  std::optional<std::string> display_label(const std::string& name, const std::string& kind, const std::string& mode) const override;
  RooflineMachine ceilings(const BackendSpec& spec, const std::string& backend, const std::string& machine) const override;

 private:
  std::string label_, ceilings_what_;
};

}  // namespace tilesim::backends
