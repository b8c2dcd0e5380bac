#include "workloads/sweep_machine_axes.hpp"

#include <charconv>
#include <cmath>
#include <set>

#include "common/error.hpp"
#include "common/strict_json.hpp"

namespace tilesim::analysis {

namespace {

constexpr std::size_t max_figure_axis_values = 100000;

struct FigureAxis {
  std::string path;
  bool scale = false;
  std::vector<double> values;
};

double finite_figure_value(const nlohmann::json& v, const std::string& file, const std::string& path) {
  if (v.is_number() && std::isfinite(v.get<double>())) return v.get<double>();
  throw InputError(file, path, "a finite number", describe_json(v));
}

// The text of a value in a machine name: "1277952", "1850000000", "0.5", "3.0844216508158812".
std::string figure_number_text(double v) {
  // Whole values as integers (counts, byte sizes, clock rates read as written); others shortest.
  if (v == std::floor(v) && std::abs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  char buffer[64];
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, r.ptr);
}

std::vector<double> listed_figure_values(const nlohmann::json& v, const std::string& file, const std::string& path) {
  if (!v.is_array() || v.empty()) throw InputError(file, path, "a non-empty array of numbers", describe_json(v));
  std::vector<double> values;
  std::set<double> seen;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    const double x = finite_figure_value(v[i], file, p);
    if (!seen.insert(x).second) throw InputError(file, p, "each value once", figure_number_text(x) + " twice");
    values.push_back(x);
  }
  return values;
}

std::vector<double> ranged_figure_values(ObjectReader& r) {
  const double from = finite_figure_value(r.value("from"), r.file(), r.path_of("from"));
  const double to = finite_figure_value(r.value("to"), r.file(), r.path_of("to"));
  if (to < from) throw InputError(r.file(), r.path_of("to"), "a number >= from (" + figure_number_text(from) + ")", figure_number_text(to));
  const bool times = r.has("times"), step = r.has("step");
  if (times == step)
    throw InputError(r.file(), r.path(), "exactly one of \"times\" (a geometric range) and \"step\" (an arithmetic range)",
                     times ? "both" : "neither");
  std::vector<double> values;
  if (times) {
    const double factor = r.number_above("times", 1.0, 1e6);
    if (!(from > 0)) throw InputError(r.file(), r.path_of("from"), "a number above 0 for a geometric range", figure_number_text(from));
    for (std::size_t k = 0; k <= max_figure_axis_values; ++k) {
      const double x = from * std::pow(factor, static_cast<double>(k));
      if (x > to * (1 + 1e-12)) break;
      values.push_back(x);
    }
  } else {
    const double stride = r.number_above("step", 0.0, 1e300);
    for (std::size_t k = 0; k <= max_figure_axis_values; ++k) {
      const double x = from + stride * static_cast<double>(k);
      if (x > to + stride * 1e-9) break;
      values.push_back(x);
    }
  }
  if (values.size() > max_figure_axis_values)
    throw InputError(r.file(), r.path(), "a range of at most " + std::to_string(max_figure_axis_values) + " values", "more");
  return values;
}

FigureAxis read_figure_axis(const std::string& figure, const nlohmann::json& v, const std::string& file, const std::string& path) {
  FigureAxis a;
  a.path = figure;
  if (v.is_array()) {
    a.values = listed_figure_values(v, file, path);
    return a;
  }
  if (!v.is_object())
    throw InputError(file, path, "an array of values, {\"scale\": [factors]} or a range {\"from\", \"to\", \"times\" or \"step\"}",
                     describe_json(v));
  ObjectReader r(v, file, path);
  if (r.has("scale")) {
    a.scale = true;
    a.values = listed_figure_values(r.value("scale"), file, r.path_of("scale"));
  } else {
    a.values = ranged_figure_values(r);
  }
  r.finish();
  return a;
}

bool valid_figure_path(const std::string& path) {
  if (path.empty() || path.front() == '.' || path.back() == '.' || path.find("..") != std::string::npos) return false;
  for (char c : path)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.')) return false;
  return true;
}

}  // namespace

std::vector<std::string> machine_axis_variants(const nlohmann::json& axes, const std::string& file, const std::string& json_path,
                                               std::size_t max_variants) {
  if (!axes.is_object() || axes.empty())
    throw InputError(file, json_path, "an object of machine figures to sweep ({\"chip.sram_bytes_per_tile\": [...]})",
                     describe_json(axes));
  std::vector<FigureAxis> list;
  std::size_t count = 1;
  for (const auto& [figure, axis] : axes.items()) {
    const std::string path = json_path + "[\"" + figure + "\"]";
    if (!valid_figure_path(figure))
      throw InputError(file, path, "a figure's JSON path in the machine file (letters, digits, '_', dots: \"chip.num_tiles\")",
                       "\"" + figure + "\"");
    list.push_back(read_figure_axis(figure, axis, file, path));
    count *= list.back().values.size();
    if (count > max_variants)
      throw InputError(file, json_path, "at most " + std::to_string(max_variants) + " machines (the axes crossed)", "more");
  }
  std::vector<std::string> variants;
  std::vector<std::size_t> at(list.size(), 0);
  for (std::size_t n = 0; n < count; ++n) {
    std::string text;
    for (std::size_t a = 0; a < list.size(); ++a)
      text += (a ? ";" : "") + list[a].path + (list[a].scale ? "*=" : "=") + figure_number_text(list[a].values[at[a]]);
    variants.push_back("{" + text + "}");
    // The last axis fastest, as the size axes.
    for (std::size_t a = list.size(); a-- > 0;) {
      if (++at[a] < list[a].values.size()) break;
      at[a] = 0;
    }
  }
  return variants;
}

std::string with_machine_overrides(const std::string& backend, const std::string& overrides, const std::string& file,
                                   const std::string& json_path) {
  const auto first = backend.find(':');
  if (first == std::string::npos || first + 1 == backend.size())
    throw InputError(file, json_path, "a backend that names its machine (\"ipu:bow\", \"gpu-model:a100-40gb\") for machine axes",
                     "\"" + backend + "\"");
  const auto second = backend.find(':', first + 1);
  if (second == std::string::npos) return backend + overrides;
  return backend.substr(0, second) + overrides + backend.substr(second);
}

}  // namespace tilesim::analysis
