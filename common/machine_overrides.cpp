#include "common/machine_overrides.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "common/strict_json.hpp"

namespace tilesim {

namespace {

const char* const syntax = "NAME{PATH=VALUE;PATH*=FACTOR;...} with PATH a figure's JSON path in the machine file "
                           "(\"chip.sram_bytes_per_tile\") and a finite number";

bool valid_path(const std::string& path) {
  if (path.empty() || path.front() == '.' || path.back() == '.' || path.find("..") != std::string::npos) return false;
  for (char c : path)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.')) return false;
  return true;
}

std::optional<double> finite_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream s(text);
  std::string part;
  while (std::getline(s, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.emplace_back();
  return parts;
}

// The node at a dotted path, or nullptr.
nlohmann::json* find(nlohmann::json& document, const std::string& path) {
  nlohmann::json* node = &document;
  for (const std::string& key : split(path, '.')) {
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &(*node)[key];
  }
  return node;
}

std::string number_text(double v) {
  std::ostringstream s;
  s.precision(std::numeric_limits<double>::max_digits10);
  s << v;
  return s.str();
}

// The new value, an integer where the base's is one and the result is whole.
nlohmann::json new_value(const nlohmann::json& old, const FigureOverride& o) {
  const double base = old.is_number() ? old.get<double>() : 0.0;
  const double v = o.scale ? base * o.value : o.value;
  if (old.is_number_integer() && v == std::floor(v) && std::abs(v) < 9.0e15) return static_cast<std::int64_t>(v);
  return v;
}

}  // namespace

std::optional<MachineOverrides> split_machine_overrides(const std::string& name, const std::string& kind) {
  const auto open = name.find('{');
  if (open == std::string::npos) return std::nullopt;
  const std::string what = kind + " machine \"" + name + "\"";
  if (name.back() != '}' || name.find('{', open + 1) != std::string::npos || name.find('}') != name.size() - 1)
    throw InputError("", "", std::string("a what-if machine ") + syntax, what + " (braces not as NAME{...})");
  MachineOverrides o;
  o.base = name.substr(0, open);
  o.text = name;
  if (o.base.empty()) throw InputError("", "", std::string("a what-if machine ") + syntax, what + " (no machine before '{')");
  std::set<std::string> seen;
  for (const std::string& item : split(name.substr(open + 1, name.size() - open - 2), ';')) {
    FigureOverride f;
    f.text = item;
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw InputError("", "", std::string("a what-if machine ") + syntax, what + " (\"" + item + "\" has no '=')");
    f.scale = eq > 0 && item[eq - 1] == '*';
    f.path = item.substr(0, f.scale ? eq - 1 : eq);
    const auto value = finite_number(item.substr(eq + 1));
    if (!valid_path(f.path))
      throw InputError("", "", std::string("a what-if machine ") + syntax, what + " (\"" + f.path + "\" is not a JSON path)");
    if (!value) throw InputError("", "", std::string("a what-if machine ") + syntax, what + " (\"" + item.substr(eq + 1) + "\" is not a finite number)");
    f.value = *value;
    if (!seen.insert(f.path).second) throw InputError("", "", "each figure of a what-if machine once", what + " (" + f.path + " twice)");
    o.figures.push_back(f);
  }
  if (o.figures.empty()) throw InputError("", "", std::string("a what-if machine ") + syntax, what + " (no figure between the braces)");
  return o;
}

MachineDocument apply_machine_overrides(MachineDocument resolved, const MachineOverrides& overrides, const std::string& kind) {
  const std::string file = resolved.files.empty() ? std::string() : resolved.files.front();
  for (const FigureOverride& o : overrides.figures) {
    nlohmann::json* figure = find(resolved.document, o.path);
    if (figure == nullptr || !figure->is_object() || !figure->contains("value"))
      throw InputError(file, o.path,
                       "a figure of the " + kind + " machine (an object holding \"value\") for what-if machine " + overrides.text,
                       figure == nullptr ? "nothing" : describe_json(*figure));
    const nlohmann::json old = (*figure)["value"];
    (*figure)["value"] = new_value(old, o);
    const std::string was = old.is_number() ? number_text(old.get<double>()) : describe_json(old);
    (*figure)["source"] = "what-if: " + o.text + " in machine " + overrides.text + ", not a published figure (the base's value " +
                          was + " from: " + figure->value("source", std::string("no source")) + ")";
    resolved.stated_in[o.path] = "what-if " + overrides.text;
  }
  if (resolved.document.is_object()) {
    resolved.document["name"] = overrides.text;
    const std::string description = resolved.document.value("description", std::string());
    resolved.document["description"] = "what-if " + overrides.text + ": " + description;
  }
  return resolved;
}

std::pair<MachineOverrides, MachineOverrides> split_by_presence(const MachineOverrides& overrides, const nlohmann::json& document) {
  MachineOverrides present = overrides, absent = overrides;
  present.figures.clear();
  absent.figures.clear();
  nlohmann::json copy = document;
  for (const auto& f : overrides.figures) (find(copy, f.path) ? present : absent).figures.push_back(f);
  return {present, absent};
}

}  // namespace tilesim
