#include "backends/registry.hpp"

#include <algorithm>

#include "backends/families.hpp"
#include "kernels/cpu/cpu_backend.hpp"

namespace tilesim::backends {

namespace {

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : separator) + item;
  return text;
}

std::string family_part(const std::string& name) { return name.substr(0, name.find(':')); }

}  // namespace

// One explicit list rather than registrar objects: a static registrar in a file of a static library
// is dropped by the linker unless something else references that file, and registrars would run in
// link order, which would decide the order of every help text and listing. Adding a family is one
// line here and one file beside it.
const std::vector<const BackendFamily*>& all_families() {
  static const std::vector<const BackendFamily*> families = {&ipu_family(), &cpu_family(), &torch_cpu_family(),
                                                             &cuda_family(), &gpu_model_family(), &cpu_model_family()};
  return families;
}

const BackendFamily* find_family(const std::string& name) {
  const std::string family = family_part(name);
  for (const BackendFamily* f : all_families())
    if (f->family() == family) return f;
  return nullptr;
}

std::string accepted_names_text() {
  std::vector<std::string> parts;
  for (const BackendFamily* f : all_families()) parts.push_back(f->info().accepted);
  return join(parts, ", ");
}

std::string backends_help_text() {
  std::vector<std::string> parts;
  for (const BackendFamily* f : all_families()) parts.push_back(f->info().help);
  return "Comma-separated backends: " + join(parts, ", ");
}

std::optional<std::string> display_label(const std::string& name, const std::string& kind, const std::string& mode) {
  const BackendFamily* family = find_family(name);
  if (family == nullptr) return std::nullopt;
  return family->display_label(name, kind, mode);
}

std::vector<std::string> roofline_machine_forms() {
  // Machines described by files first (simulated, then modeled), then this host's measured ones.
  std::vector<const BackendFamily*> families = all_families();
  auto rank = [](const BackendFamily* f) {
    return f->kind() == ResultKind::simulated ? 0 : (f->kind() == ResultKind::modeled ? 1 : 2);
  };
  std::stable_sort(families.begin(), families.end(),
                   [&](const BackendFamily* a, const BackendFamily* b) { return rank(a) < rank(b); });
  std::vector<std::string> forms;
  for (const BackendFamily* f : families)
    if (!f->info().roofline_machine_form.empty()) forms.push_back(f->info().roofline_machine_form);
  return forms;
}

std::string roofline_machine_family(const std::string& backend) {
  const BackendFamily* family = find_family(backend);
  return family == nullptr ? "" : family->info().roofline_machine_family;
}

std::string host_machine_description() { return kernels::cpu::host_description(); }

std::string version_summary() {
  std::vector<std::string> always, optional;
  for (const BackendFamily* f : all_families()) {
    const Availability a = f->availability(false);
    if (a.optional) optional.push_back(f->family() + " (" + to_string(f->kind()) + ", " + a.detail + ")");
    else always.push_back(f->family() + " (" + to_string(f->kind()) + ")");
  }
  always.insert(always.end(), optional.begin(), optional.end());
  return join(always, ", ");
}

}  // namespace tilesim::backends
