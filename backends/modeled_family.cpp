#include "backends/modeled_family.hpp"

#include <utility>

#include "backends/families.hpp"
#include "common/error.hpp"

namespace tilesim::backends {

ModeledFamily::ModeledFamily(FamilyInfo info, std::string default_machine)
    : BackendFamily(std::move(info)), default_machine_(std::move(default_machine)) {}

MachineChoice ModeledFamily::named_machine_choice() const {
  MachineChoice m;
  m.in_name = true;
  m.default_machine = default_machine_;
  m.accepts_file = true;
  return m;
}

bool ModeledFamily::is_mode(const std::string& text) const {
  for (const BackendMode& mode : info().modes)
    if (text == mode.name) return true;
  return false;
}

std::string ModeledFamily::take_mode(std::string& machine_and_mode) const {
  for (const BackendMode& mode : info().modes) {
    const std::string suffix = ":" + mode.name;
    if (ends_with(machine_and_mode, suffix)) {
      machine_and_mode.resize(machine_and_mode.size() - suffix.size());
      return mode.name;
    }
  }
  return "";
}

BackendSpec ModeledFamily::parse(const std::string& item, const std::string& accepted_by_all) const {
  BackendSpec spec;
  spec.descriptor = this;
  const auto colon = item.find(':');
  std::string rest = colon == std::string::npos ? default_machine_ : item.substr(colon + 1);
  const bool mode_alone = is_mode(rest);
  if (mode_alone && mode_alone_names_default_machine()) rest = default_machine_ + ":" + rest;
  const std::string mode = take_mode(rest);
  spec.mode = mode.empty() ? default_mode() : mode;
  // What is left must name a machine: not empty ("ipu:", "gpu-model::eager") and, unless a mode alone
  // names the default machine, not a mode ("gpu-model:eager", "gpu-model:eager:kernel").
  if (rest.empty() || (!mode_alone_names_default_machine() && is_mode(rest)))
    throw InputError("", "--backends", accepted_by_all, "\"" + item + "\"");
  spec.machine = rest;
  return spec;
}

}  // namespace tilesim::backends
