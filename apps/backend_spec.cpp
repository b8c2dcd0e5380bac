#include "apps/backend_spec.hpp"

#include <set>
#include <sstream>

#include "common/error.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "models/ipu/ipu_backend.hpp"

namespace tilesim::cli {

namespace {
const char* kAccepted = "ipu, ipu:MACHINE (bow, mk2, mk1 or a machine file path) or cpu";
}

std::vector<BackendSpec> parse_backend_list(const std::string& list) {
  std::vector<BackendSpec> specs;
  std::set<std::string> seen;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) throw InputError("", "--backends", kAccepted, "an empty entry in \"" + list + "\"");
    BackendSpec spec;
    const auto colon = item.find(':');
    spec.family = item.substr(0, colon);
    if (spec.family == "ipu") {
      spec.machine = colon == std::string::npos ? "bow" : item.substr(colon + 1);
      if (spec.machine.empty()) throw InputError("", "--backends", kAccepted, "\"" + item + "\"");
    } else if (spec.family == "cpu") {
      if (colon != std::string::npos) throw InputError("", "--backends", "cpu without a machine name", "\"" + item + "\"");
    } else {
      throw InputError("", "--backends", kAccepted, "\"" + item + "\"");
    }
    if (!seen.insert(spec.name()).second) throw InputError("", "--backends", "each backend once", "\"" + spec.name() + "\" twice");
    specs.push_back(spec);
  }
  if (specs.empty()) throw InputError("", "--backends", kAccepted, "an empty list");
  return specs;
}

std::unique_ptr<Backend> make_backend(const BackendSpec& spec) {
  if (spec.family == "ipu") return std::make_unique<ipu::IpuBackend>(ipu::load_ipu_machine(spec.machine), spec.name());
  return std::make_unique<kernels::cpu::CpuBackend>();
}

}  // namespace tilesim::cli
