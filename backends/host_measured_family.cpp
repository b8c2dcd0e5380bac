#include "backends/host_measured_family.hpp"

#include <utility>

#include "backends/machine_ceilings.hpp"
#include "common/error.hpp"

namespace tilesim::backends {

HostMeasuredFamily::HostMeasuredFamily(FamilyInfo info, std::string label, std::string ceilings_what)
    : BackendFamily(std::move(info)), label_(std::move(label)), ceilings_what_(std::move(ceilings_what)) {}

MachineChoice HostMeasuredFamily::machine_choice() const {
  MachineChoice m;
  m.runs_on = "this host's cores";
  return m;
}

BackendSpec HostMeasuredFamily::parse(const std::string& item, const std::string&) const {
  if (item.find(':') != std::string::npos)
    throw InputError("", "--backends", family() + " without a machine name", "\"" + item + "\"");
  BackendSpec spec;
  spec.descriptor = this;
  return spec;
}

std::string HostMeasuredFamily::row_mode(const BackendSpec&, const TimingSettings& timing) const {
  return "median-of-" + std::to_string(timing.timed_calls);
}

std::string HostMeasuredFamily::plan_text(const BackendSpec&, const TimingSettings& timing) const {
  return "measured, median of " + std::to_string(timing.timed_calls) + " calls after " + std::to_string(timing.warmup) + " warm-up";
}

std::optional<std::string> HostMeasuredFamily::display_label(const std::string& name, const std::string&, const std::string&) const {
  if (name != family()) return std::nullopt;
  return label_;
}

RooflineMachine HostMeasuredFamily::ceilings(const BackendSpec&, const std::string& backend, const std::string& machine) const {
  return host_cpu_ceilings(backend, machine, ceilings_what_);
}

}  // namespace tilesim::backends
