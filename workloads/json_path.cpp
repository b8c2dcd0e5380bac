#include "workloads/json_path.hpp"

#include <cctype>

#include "common/strict_json.hpp"

namespace tilesim::workloads {

namespace {

bool path_key_char(char c) { return c != '.' && c != '[' && c != ']'; }

// The path up to and including `step`, as an error names the place: "model", "model[1]", "train.optimizer".
std::string extend_path_text(const std::string& where, const JsonPathStep& step) {
  switch (step.kind) {
    case JsonPathStep::Kind::key: return where.empty() ? step.key : where + "." + step.key;
    case JsonPathStep::Kind::index: return where + "[" + std::to_string(step.index) + "]";
    case JsonPathStep::Kind::every: return where + "[*]";
  }
  return where;
}

std::string path_place_text(const std::string& where) { return where.empty() ? "the workload" : where; }

std::string set_along_path(nlohmann::json& node, const std::vector<JsonPathStep>& steps, std::size_t i, const nlohmann::json& value,
                     const std::string& where) {
  const JsonPathStep& step = steps[i];
  const bool last = i + 1 == steps.size();
  const std::string here = extend_path_text(where, step);
  if (step.kind == JsonPathStep::Kind::key) {
    if (!node.is_object()) return path_place_text(where) + " is " + describe_json(node) + ", not an object";
    if (!node.contains(step.key)) {
      // Only the last key may be new: a missing section on the way is more likely a misspelt one.
      if (!last) return "no \"" + step.key + "\" in " + path_place_text(where);
      node[step.key] = value;
      return "";
    }
    if (last) {
      node[step.key] = value;
      return "";
    }
    return set_along_path(node[step.key], steps, i + 1, value, here);
  }
  if (!node.is_array()) return path_place_text(where) + " is " + describe_json(node) + ", not an array";
  if (step.kind == JsonPathStep::Kind::index) {
    if (step.index >= node.size())
      return path_place_text(where) + " has " + std::to_string(node.size()) + " element" + (node.size() == 1 ? "" : "s") + ", no " + here;
    if (last) {
      node[step.index] = value;
      return "";
    }
    return set_along_path(node[step.index], steps, i + 1, value, here);
  }
  // "[*]" over no element would set nothing: an axis that changes nothing is a mistake.
  if (node.empty()) return path_place_text(where) + " is an empty array";
  for (std::size_t k = 0; k < node.size(); ++k) {
    if (last) {
      node[k] = value;
      continue;
    }
    const std::string why = set_along_path(node[k], steps, i + 1, value, where + "[" + std::to_string(k) + "]");
    if (!why.empty()) return why;
  }
  return "";
}

}  // namespace

std::optional<JsonPath> parse_json_path(const std::string& text) {
  JsonPath path;
  path.text = text;
  std::size_t i = 0;
  bool want_key = true;  // at the start and after '.'
  while (i < text.size()) {
    if (want_key) {
      const std::size_t start = i;
      while (i < text.size() && path_key_char(text[i])) ++i;
      if (i == start) return std::nullopt;
      path.steps.push_back({JsonPathStep::Kind::key, text.substr(start, i - start), 0});
      want_key = false;
      continue;
    }
    if (text[i] == '.') {
      want_key = true;
      ++i;
      continue;
    }
    if (text[i] != '[') return std::nullopt;
    const std::size_t close = text.find(']', i);
    if (close == std::string::npos) return std::nullopt;
    const std::string inside = text.substr(i + 1, close - i - 1);
    if (inside == "*") {
      path.steps.push_back({JsonPathStep::Kind::every, "", 0});
    } else {
      // At most 9 digits: no array of a workload comes near a billion elements, and no overflow.
      if (inside.empty() || inside.size() > 9) return std::nullopt;
      for (char c : inside)
        if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
      path.steps.push_back({JsonPathStep::Kind::index, "", static_cast<std::size_t>(std::stoul(inside))});
    }
    i = close + 1;
  }
  if (want_key) return std::nullopt;  // empty, or ending in '.'
  return path;
}

std::string set_at_path(nlohmann::json& document, const JsonPath& path, const nlohmann::json& value) {
  if (path.steps.empty()) return "an empty path";
  return set_along_path(document, path.steps, 0, value, "");
}

}  // namespace tilesim::workloads
