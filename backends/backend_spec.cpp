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

std::vector<std::string> split_backend_list(const std::string& list) {
  if (list.empty()) throw InputError("", "--backends", "a comma-separated list of backends (" + accepted_names_text() + ")", "an empty list");
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    items.push_back(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (items.back().empty())
      throw InputError("", "--backends", "a comma-separated list of backends (" + accepted_names_text() + ")",
                       "an empty entry in \"" + list + "\"");
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

std::vector<BackendSpec> parse_backend_list(const std::string& list) {
  const std::string accepted = accepted_names_text();
  std::vector<BackendSpec> specs;
  std::set<std::string> seen;
  for (const std::string& item : split_backend_list(list)) {
    const BackendFamily* family = find_family(item);
    if (family == nullptr) throw InputError("", "--backends", accepted, "\"" + item + "\"");
    BackendSpec spec = family->parse(item, accepted);
    if (!seen.insert(spec.name()).second) throw InputError("", "--backends", "each backend once", "\"" + spec.name() + "\" twice");
    specs.push_back(spec);
  }
  return specs;
}

std::unique_ptr<Backend> make_backend(const BackendSpec& spec) { return spec.descriptor->make(spec); }

}  // namespace tilesim::backends
