#include "backends/backend_spec.hpp"

#include <set>
#include <sstream>

#include "backends/registry.hpp"
#include "common/error.hpp"

namespace tilesim::backends {

std::string BackendSpec::name() const {
  std::string n = machine.empty() ? descriptor->family() : descriptor->family() + ":" + machine;
  return mode == descriptor->default_mode() ? n : n + ":" + mode;
}

std::vector<BackendSpec> parse_backend_list(const std::string& list) {
  const std::string accepted = accepted_names_text();
  std::vector<BackendSpec> specs;
  std::set<std::string> seen;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) throw InputError("", "--backends", accepted, "an empty entry in \"" + list + "\"");
    const BackendFamily* family = find_family(item);
    if (family == nullptr) throw InputError("", "--backends", accepted, "\"" + item + "\"");
    BackendSpec spec = family->parse(item, accepted);
    if (!seen.insert(spec.name()).second) throw InputError("", "--backends", "each backend once", "\"" + spec.name() + "\" twice");
    specs.push_back(spec);
  }
  if (specs.empty()) throw InputError("", "--backends", accepted, "an empty list");
  return specs;
}

std::unique_ptr<Backend> make_backend(const BackendSpec& spec) { return spec.descriptor->make(spec); }

}  // namespace tilesim::backends
