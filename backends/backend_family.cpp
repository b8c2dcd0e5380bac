#include "backends/backend_family.hpp"

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

}  // namespace tilesim::backends
