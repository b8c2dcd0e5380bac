#include "backends/family_listing.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "backends/registry.hpp"

namespace tilesim::backends {

namespace {

nlohmann::json describe_machine(const MachineChoice& m) {
  if (!m.in_name) return {{"in_name", false}, {"runs_on", m.runs_on}};
  return {{"in_name", true}, {"default", m.default_machine}, {"shipped", m.shipped}, {"machine_file", m.accepts_file}};
}

// "built in"; "built: libtorch ..."; "not built: ..." (the detail says so itself).
std::string build_text(const Availability& a) {
  if (!a.optional) return "built in";
  return a.built ? "built: " + a.detail : a.detail;
}

nlohmann::json describe(const BackendFamily& f, bool probe_devices) {
  const FamilyInfo& info = f.info();
  const Availability a = f.availability(probe_devices);
  nlohmann::json modes = nlohmann::json::array();
  for (const auto& m : info.modes) modes.push_back({{"name", m.name}, {"default", m.is_default}, {"description", m.description}});
  nlohmann::json j = {{"family", info.family},
                      {"grammar", info.grammar},
                      {"kind", to_string(info.kind)},
                      {"summary", info.summary},
                      {"modes", modes},
                      {"machine", describe_machine(f.machine_choice())},
                      {"built", a.built},
                      {"optional", a.optional},
                      {"build", build_text(a)},
                      {"training_steps", info.runs_training_steps},
                      {"fixed_shapes", info.fixed_shapes}};
  bool available = a.built;
  if (a.needs_device && a.built) {
    if (probe_devices) {
      j["device"] = {{"present", a.device_present}, {"detail", a.device}};
      available = a.device_present;
    } else {
      j["device"] = {{"present", nullptr}, {"detail", "not probed"}};
    }
  }
  j["available"] = available;
  return j;
}

std::string machine_text(const nlohmann::json& m) {
  if (!m["in_name"].get<bool>()) return m["runs_on"].get<std::string>();
  std::vector<std::string> names = m["shipped"].get<std::vector<std::string>>();
  std::sort(names.begin(), names.end());
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n + (n == m["default"].get<std::string>() ? " (default)" : "");
  if (m["machine_file"].get<bool>()) text += (text.empty() ? "" : ", or ") + std::string("a machine file path");
  return text;
}

}  // namespace

nlohmann::json describe_families(bool probe_devices) {
  nlohmann::json list = nlohmann::json::array();
  for (const BackendFamily* f : all_families()) list.push_back(describe(*f, probe_devices));
  return list;
}

std::string families_text(const nlohmann::json& families) {
  std::ostringstream out;
  for (const auto& f : families) {
    out << f["grammar"].get<std::string>() << "  (" << f["kind"].get<std::string>() << ")\n";
    out << "  " << f["summary"].get<std::string>() << "\n";
    std::size_t width = 0;
    for (const auto& m : f["modes"]) width = std::max(width, m["name"].get<std::string>().size() + (m["default"].get<bool>() ? 10 : 0));
    bool first = true;
    for (const auto& m : f["modes"]) {
      const std::string name = m["name"].get<std::string>() + (m["default"].get<bool>() ? " (default)" : "");
      out << (first ? "  modes:    " : "            ") << std::left << std::setw(static_cast<int>(width + 2)) << name
          << m["description"].get<std::string>() << "\n";
      first = false;
    }
    out << "  machine:  " << machine_text(f["machine"]) << "\n";
    out << "  training: " << (f["training_steps"].get<bool>() ? "runs training steps (a workload's \"train\")" : "forward passes only") << "\n";
    out << "  status:   " << f["build"].get<std::string>();
    if (f.contains("device"))
      out << "; " << (f["device"]["present"] == true ? "GPU present: " : "") << f["device"]["detail"].get<std::string>();
    out << "\n";
  }
  return out.str();
}

}  // namespace tilesim::backends
