#include "analysis/contour.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "analysis/sensitivity.hpp"
#include "common/error.hpp"
#include "common/machine_overrides.hpp"

namespace tilesim::analysis {

namespace {

using ContourSetting = std::pair<bool, double>;  // (scaled, value) as the override states it

// One row as the map sees it: its group, its point and every figure it sets.
struct ContourRow {
  std::string backend, op, kind, point;
  std::map<std::string, ContourSetting> figures;
  double time_s = 0;
};

std::vector<ContourRow> contour_place_rows(const std::vector<ResultRow>& rows, const std::string& file,
                                           const std::vector<std::string>& ops, const std::vector<std::string>& backends) {
  std::vector<ContourRow> placed;
  for (const ResultRow& r : rows) {
    if (!r.time_s || r.machine.find('{') == std::string::npos) continue;
    if (!ops.empty() && std::find(ops.begin(), ops.end(), r.op) == ops.end()) continue;
    const std::string base = what_if_base_backend(r.backend);
    if (!backends.empty() && std::find(backends.begin(), backends.end(), base) == backends.end()) continue;
    const std::optional<MachineOverrides> o = row_overrides(r, file);
    ContourRow p{base, r.op, r.kind, grid_point_key(r), {}, *r.time_s};
    for (const FigureOverride& f : o->figures) p.figures[f.path] = {f.scale, f.value};
    placed.push_back(std::move(p));
  }
  return placed;
}

std::string contour_setting_text(const std::string& path, const ContourSetting& s) {
  char value[40];
  std::snprintf(value, sizeof value, "%.6g", s.second);
  return path + (s.first ? "*=" : "=") + value;
}

// The other figures' held settings: the base's (a scale of 1) where the sweep has it, else the smallest.
std::map<std::string, ContourSetting> contour_held(const std::vector<const ContourRow*>& rows, const std::string& x, const std::string& y) {
  std::map<std::string, std::set<ContourSetting>> settings;
  for (const ContourRow* r : rows)
    for (const auto& [path, s] : r->figures)
      if (path != x && path != y) settings[path].insert(s);
  std::map<std::string, ContourSetting> held;
  for (const auto& [path, set] : settings) {
    const ContourSetting base{true, 1.0};
    held[path] = set.count(base) ? base : *std::min_element(set.begin(), set.end(), [](const auto& a, const auto& b) {
      return a.second < b.second;
    });
  }
  return held;
}

// The index of the base setting (a scale of 1) among ascending values, else 0: the first value.
std::size_t contour_reference_index(const std::vector<double>& values, bool scale) {
  const auto it = std::find(values.begin(), values.end(), 1.0);
  return scale && it != values.end() ? static_cast<std::size_t>(it - values.begin()) : 0;
}

// The map of one group, or nullopt when either figure takes fewer than two values among its kept rows.
std::optional<ContourMap> contour_map_of(const std::vector<const ContourRow*>& rows, const std::string& x, const std::string& y) {
  const auto held = contour_held(rows, x, y);
  ContourMap m;
  m.backend = rows.front()->backend;
  m.op = rows.front()->op;
  m.kind = rows.front()->kind;
  m.x_figure = x;
  m.y_figure = y;
  for (const auto& [path, s] : held) m.held.push_back(contour_setting_text(path, s));
  // Cell (x value, y value) -> point -> time; a row is kept when it sets both figures and holds the rest.
  std::map<std::pair<double, double>, std::map<std::string, double>> cells;
  std::set<double> xs, ys;
  std::set<std::string> points;
  for (const ContourRow* r : rows) {
    const auto fx = r->figures.find(x), fy = r->figures.find(y);
    if (fx == r->figures.end() || fy == r->figures.end()) continue;
    bool kept = true;
    for (const auto& [path, s] : held) {
      const auto f = r->figures.find(path);
      kept = kept && (f == r->figures.end() ? s == ContourSetting{true, 1.0} : f->second == s);
    }
    if (!kept) continue;
    m.x_scale = fx->second.first;
    m.y_scale = fy->second.first;
    cells[{fx->second.second, fy->second.second}].emplace(r->point, r->time_s);
    xs.insert(fx->second.second);
    ys.insert(fy->second.second);
    points.insert(r->point);
  }
  if (xs.size() < 2 || ys.size() < 2) return std::nullopt;
  m.x_values.assign(xs.begin(), xs.end());
  m.y_values.assign(ys.begin(), ys.end());
  m.points = points.size();
  m.x_reference = contour_reference_index(m.x_values, m.x_scale);
  m.y_reference = contour_reference_index(m.y_values, m.y_scale);
  const auto& reference = cells[{m.x_values[m.x_reference], m.y_values[m.y_reference]}];
  for (double yv : m.y_values) {
    m.relative_time.emplace_back();
    m.shared_points.emplace_back();
    for (double xv : m.x_values) {
      std::vector<double> ratios;
      const auto cell = cells.find({xv, yv});
      if (cell != cells.end())
        for (const auto& [point, t] : cell->second) {
          const auto ref = reference.find(point);
          if (ref != reference.end() && ref->second > 0) ratios.push_back(t / ref->second);
        }
      m.relative_time.back().push_back(ratios.empty() ? std::nullopt : std::optional<double>(ratio_median(ratios)));
      m.shared_points.back().push_back(ratios.size());
    }
  }
  return m;
}

}  // namespace

std::string contour_axis_label(const std::string& figure, bool scale) {
  return scale ? figure + " (factor on the base machine's)" : figure;
}

std::vector<ContourMap> contour_maps(const std::vector<ResultRow>& rows, const std::string& results_file, const std::string& x_figure,
                                     const std::string& y_figure, const std::vector<std::string>& ops,
                                     const std::vector<std::string>& backends) {
  const std::string sweep = "docs/sweep-format.md, \"Machine axes\"";
  if (x_figure == y_figure)
    throw InputError(results_file, "--x, --y", "two different machine figures", "\"" + x_figure + "\" twice");
  const std::vector<ContourRow> placed = contour_place_rows(rows, results_file, ops, backends);
  for (const std::string& path : {x_figure, y_figure}) {
    const bool set = std::any_of(placed.begin(), placed.end(), [&](const ContourRow& r) { return r.figures.count(path) > 0; });
    if (!set)
      throw InputError(results_file, path == x_figure ? "--x" : "--y",
                       "a figure the sweep's what-if machines set (ipu:bow{" + path + "*=2}; " + sweep + ")",
                       "no row that sets " + path + (ops.empty() && backends.empty() ? "" : " among the selected ops and backends"));
  }
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::vector<const ContourRow*>> by_group;
  for (const ContourRow& p : placed) {
    const auto key = std::make_pair(p.backend, p.op);
    if (!by_group.count(key)) order.push_back(key);
    by_group[key].push_back(&p);
  }
  std::vector<ContourMap> maps;
  for (const auto& key : order)
    if (auto m = contour_map_of(by_group[key], x_figure, y_figure)) maps.push_back(std::move(*m));
  if (maps.empty())
    throw InputError(results_file, "", "a backend and op with at least two values of " + x_figure + " and two of " + y_figure + " (" + sweep + ")",
                     "none: no group sweeps both figures with the other figures held");
  return maps;
}

}  // namespace tilesim::analysis
