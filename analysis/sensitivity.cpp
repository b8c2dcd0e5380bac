#include "analysis/sensitivity.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "common/error.hpp"
#include "common/machine_overrides.hpp"

namespace tilesim::analysis {

namespace {

// One row as the sensitivity sees it: where it belongs and the value of each figure it sets.
struct PlacedRow {
  std::string backend, op, point;         // point: shape, dtype and repeat
  std::map<std::string, std::pair<bool, double>> figures;  // path -> (scaled, value)
  double time_s = 0;
};

std::vector<PlacedRow> place_rows(const std::vector<ResultRow>& rows, const std::string& file, const std::vector<std::string>& ops) {
  std::vector<PlacedRow> placed;
  for (const ResultRow& r : rows) {
    if (!r.time_s || r.machine.find('{') == std::string::npos) continue;
    if (!ops.empty() && std::find(ops.begin(), ops.end(), r.op) == ops.end()) continue;
    const std::optional<MachineOverrides> o = row_overrides(r, file);
    PlacedRow p;
    p.backend = what_if_base_backend(r.backend);
    p.op = r.op;
    p.point = grid_point_key(r);
    for (const FigureOverride& f : o->figures) p.figures[f.path] = {f.scale, f.value};
    p.time_s = *r.time_s;
    placed.push_back(std::move(p));
  }
  return placed;
}

// Every digit: two settings of a figure are one only when they are equal.
std::string exact_text(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

// The curve of one figure over the rows of one (backend, op).
SensitivityCurve curve_of(const std::vector<const PlacedRow*>& rows, const std::string& figure) {
  SensitivityCurve c;
  c.backend = rows.front()->backend;
  c.op = rows.front()->op;
  c.figure = figure;
  // Group: the point and every other figure's setting; within it, time by this figure's value.
  std::map<std::string, std::map<double, double>> groups;
  std::map<double, bool> values;
  for (const PlacedRow* r : rows) {
    const auto it = r->figures.find(figure);
    if (it == r->figures.end()) continue;
    c.scale = it->second.first;
    std::string key = r->point;
    for (const auto& [path, setting] : r->figures)
      if (path != figure) key += ";" + path + (setting.first ? "*=" : "=") + exact_text(setting.second);
    groups[key][it->second.second] = r->time_s;
    values[it->second.second] = true;
  }
  for (const auto& [v, _] : values) c.values.push_back(v);
  std::vector<std::vector<double>> ratios(c.values.size());
  for (const auto& [key, times] : groups) {
    const auto reference = times.find(c.values.front());
    if (reference == times.end() || !(reference->second > 0)) continue;
    for (std::size_t i = 0; i < c.values.size(); ++i) {
      const auto t = times.find(c.values[i]);
      if (t != times.end()) ratios[i].push_back(t->second / reference->second);
    }
  }
  for (const auto& list : ratios) {
    c.groups.push_back(list.size());
    c.median_ratio.push_back(list.empty() ? 0.0 : ratio_median(list));
    c.min_ratio.push_back(list.empty() ? 0.0 : *std::min_element(list.begin(), list.end()));
    c.max_ratio.push_back(list.empty() ? 0.0 : *std::max_element(list.begin(), list.end()));
  }
  return c;
}

}  // namespace

std::string what_if_base_backend(const std::string& backend) {
  const auto open = backend.find('{'), close = backend.find('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return backend;
  return backend.substr(0, open) + backend.substr(close + 1);
}

std::string grid_point_key(const ResultRow& row) {
  std::string key = std::to_string(row.shape.num_inputs) + "x" + std::to_string(row.shape.num_features) + "x" +
                    std::to_string(row.shape.num_outputs) + "/" + row.dtype + "/" + std::to_string(row.repeat);
  // A workload sweep's point is its axis cells (analysis/workload_results.hpp), not sizes.
  for (const auto& [column, cell] : row.point_columns) key += "/" + column + "=" + cell;
  return key;
}

double ratio_median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::optional<MachineOverrides> row_overrides(const ResultRow& row, const std::string& results_file) {
  try {
    return split_machine_overrides(row.machine, "what-if");
  } catch (const InputError& e) {
    throw InputError(results_file, "line " + std::to_string(row.line) + ", column machine", "a what-if machine name",
                     row.machine + " (" + e.what() + ")");
  }
}

std::vector<SensitivityCurve> machine_sensitivity(const std::vector<ResultRow>& rows, const std::string& results_file,
                                                  const std::vector<std::string>& ops) {
  const std::vector<PlacedRow> placed = place_rows(rows, results_file, ops);
  // (backend, op) in the order the rows name them, and the figures each sets, in path order.
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::vector<const PlacedRow*>> by_group;
  for (const PlacedRow& p : placed) {
    const auto key = std::make_pair(p.backend, p.op);
    if (!by_group.count(key)) order.push_back(key);
    by_group[key].push_back(&p);
  }
  std::vector<SensitivityCurve> curves;
  for (const auto& key : order) {
    const auto& list = by_group[key];
    std::map<std::string, bool> figures;
    for (const PlacedRow* r : list)
      for (const auto& [path, _] : r->figures) figures[path] = true;
    for (const auto& [figure, _] : figures) {
      SensitivityCurve c = curve_of(list, figure);
      if (c.values.size() >= 2) curves.push_back(std::move(c));
    }
  }
  if (curves.empty())
    throw InputError(results_file, "", "rows of a sweep over machine figures (backends such as ipu:bow{chip.tile_clock_hz*=2}, at "
                                      "least two values of a figure; docs/sweep-format.md, \"Machine axes\")",
                     "no figure that varies" + std::string(ops.empty() ? "" : " among the selected ops"));
  return curves;
}

}  // namespace tilesim::analysis
