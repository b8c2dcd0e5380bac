#include "analysis/speedup_axes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>

#include "analysis/sensitivity.hpp"
#include "common/error.hpp"
#include "results/workload_sweep_columns.hpp"

namespace tilesim::analysis {

namespace {

std::string axes_join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

// A cell by name, "" where the point has none: a missing cell and an empty one read alike.
const std::string& axes_cell(const std::map<std::string, std::string>& cells, const std::string& name) {
  static const std::string none;
  const auto it = cells.find(name);
  return it == cells.end() ? none : it->second;
}

// A row's point cells in the order a reader of the file meets them: the sizes, dtype, then the rest.
std::vector<std::pair<std::string, std::string>> axes_ordered_cells(const ResultRow& row) {
  std::vector<std::pair<std::string, std::string>> ordered;
  auto cells = row_point_cells(row);
  for (const char* first : {"num_inputs", "num_features", "num_outputs", "dtype"}) {
    const auto it = cells.find(first);
    if (it == cells.end()) continue;
    ordered.emplace_back(*it);
    cells.erase(it);
  }
  ordered.insert(ordered.end(), cells.begin(), cells.end());
  return ordered;
}

// The figures a row's what-if machine sets; none for a machine named without overrides.
std::vector<FigureOverride> axes_row_figures(const ResultRow& row, const std::string& file) {
  if (row.machine.find('{') == std::string::npos) return {};
  const std::optional<MachineOverrides> o = row_overrides(row, file);
  return o ? o->figures : std::vector<FigureOverride>{};
}

// Every point cell name the rows have, each once in first-met order, then the figures their what-if
// machines set: what --average-over may name.
std::vector<std::string> axes_known_columns(const std::vector<ResultRow>& rows, const std::string& file) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const ResultRow& r : rows)
    for (const auto& [name, text] : axes_ordered_cells(r))
      if (seen.insert(name).second) names.push_back(name);
  for (const ResultRow& r : rows)
    for (const FigureOverride& f : axes_row_figures(r, file))
      if (seen.insert(f.path).second) names.push_back(f.path);
  return names;
}

// Panels in order cell by cell: numbers by value and before text, text by text.
struct AxesPanelOrder {
  bool operator()(const std::vector<std::string>& a, const std::vector<std::string>& b) const {
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
      if (a[i] == b[i]) continue;
      const auto na = csv_finite_number(a[i]), nb = csv_finite_number(b[i]);
      if (na && nb && *na != *nb) return *na < *nb;
      if (na.has_value() != nb.has_value()) return na.has_value();
      return a[i] < b[i];
    }
    return a.size() < b.size();
  }
};

// The index of `v` among ascending `values` (it is one of them).
std::size_t axes_index(const std::vector<double>& values, double v) {
  return static_cast<std::size_t>(std::lower_bound(values.begin(), values.end(), v) - values.begin());
}

// "num_features 16-512" for numbers, "dtype (2 values)" for text: what the cells of a grid average over.
std::string axes_span_text(const std::string& column, const std::vector<const std::map<std::string, std::string>*>& cells) {
  std::set<std::string> texts;
  std::optional<std::pair<double, std::string>> lo, hi;
  bool numbers = true;
  for (const auto* c : cells) {
    const std::string& text = axes_cell(*c, column);
    texts.insert(text);
    const auto v = csv_finite_number(text);
    if (!v) {
      numbers = false;
      continue;
    }
    if (!lo || *v < lo->first) lo = std::make_pair(*v, text);
    if (!hi || *v > hi->first) hi = std::make_pair(*v, text);
  }
  if (numbers && lo) return column + " " + lo->second + (hi->first > lo->first ? "-" + hi->second : "");
  return column + " (" + std::to_string(texts.size()) + " value" + (texts.size() == 1 ? "" : "s") + ")";
}

// A figure's value with as few digits as give it back exactly ("0.1", not "0.10000000000000001"), so
// that two settings are one cell only when they are equal.
std::string axes_exact_text(double v) {
  char text[40];
  for (int digits : {15, 17}) {
    std::snprintf(text, sizeof text, "%.*g", digits, v);
    if (std::strtod(text, nullptr) == v) break;
  }
  return text;
}

}  // namespace

std::map<std::string, std::string> point_cells(const PointId& id) {
  std::map<std::string, std::string> cells = id.columns;
  if (id.shape.num_inputs > 0) {
    cells["num_inputs"] = std::to_string(id.shape.num_inputs);
    cells["num_features"] = std::to_string(id.shape.num_features);
    cells["num_outputs"] = std::to_string(id.shape.num_outputs);
  }
  if (!id.dtype.empty()) cells["dtype"] = id.dtype;
  return cells;
}

std::map<std::string, std::string> row_point_cells(const ResultRow& row) {
  return point_cells(PointId{row.op, row.shape, row.dtype, row.point_columns});
}

std::vector<std::string> varying_columns(const std::vector<SpeedupSample>& points, const std::string& x, const std::string& y) {
  std::vector<std::map<std::string, std::string>> cells;
  std::set<std::string> names;
  for (const auto& p : points) {
    cells.push_back(point_cells(p.id));
    for (const auto& [name, text] : cells.back())
      if (name != x && name != y) names.insert(name);
  }
  // The first point of each (x, y) cell; a column varies when a later point of the cell differs there.
  std::map<std::pair<std::string, std::string>, const std::map<std::string, std::string>*> first;
  std::set<std::string> varying;
  for (const auto& c : cells) {
    const auto [it, fresh] = first.emplace(std::make_pair(axes_cell(c, x), axes_cell(c, y)), &c);
    if (fresh) continue;
    for (const auto& name : names)
      if (!varying.count(name) && axes_cell(*it->second, name) != axes_cell(c, name)) varying.insert(name);
  }
  return {varying.begin(), varying.end()};
}

std::vector<std::string> panel_columns(const std::vector<SpeedupSample>& points, const SurfaceAxes& axes) {
  if (axes.average_all) return {};
  std::vector<std::string> panels;
  for (const auto& c : varying_columns(points, axes.x, axes.y))
    if (std::find(axes.average_over.begin(), axes.average_over.end(), c) == axes.average_over.end()) panels.push_back(c);
  return panels;
}

bool log_axis_fits(const std::vector<double>& values) {
  if (values.empty()) return false;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return *lo > 0 && *hi > 8 * *lo;
}

std::vector<SpeedupGrid> grids_over(const std::vector<SpeedupSample>& points, const std::string& x, const std::string& y,
                                    const std::vector<std::string>& panels, bool mean_always, bool force_log) {
  std::vector<std::map<std::string, std::string>> cells;
  std::vector<double> px, py;
  std::set<double> xs, ys;
  std::map<std::vector<std::string>, std::vector<std::size_t>, AxesPanelOrder> by_panel;
  for (std::size_t i = 0; i < points.size(); ++i) {
    cells.push_back(point_cells(points[i].id));
    const auto xv = csv_finite_number(axes_cell(cells.back(), x)), yv = csv_finite_number(axes_cell(cells.back(), y));
    if (!xv || !yv) throw std::invalid_argument("grids_over: a point without a number in " + (xv ? y : x));
    px.push_back(*xv);
    py.push_back(*yv);
    xs.insert(*xv);
    ys.insert(*yv);
    std::vector<std::string> key;
    for (const auto& c : panels) key.push_back(axes_cell(cells.back(), c));
    by_panel[key].push_back(i);
  }
  // What the cells average over: the varying columns that do not split panels.
  std::vector<std::string> averaged;
  for (const auto& c : varying_columns(points, x, y))
    if (std::find(panels.begin(), panels.end(), c) == panels.end()) averaged.push_back(c);

  std::vector<SpeedupGrid> grids;
  for (const auto& [key, members] : by_panel) {
    SpeedupGrid g;
    g.x_column = x;
    g.y_column = y;
    g.xs.assign(xs.begin(), xs.end());
    g.ys.assign(ys.begin(), ys.end());
    g.x_log = force_log || log_axis_fits(g.xs);
    g.y_log = force_log || log_axis_fits(g.ys);
    // Per cell: the sum of log speedups, their count and the one speedup (kept as is when alone).
    struct Sum {
      double log_sum = 0;
      int count = 0;
      double only = 0;
    };
    std::vector<std::vector<Sum>> sums(g.xs.size(), std::vector<Sum>(g.ys.size()));
    std::vector<const std::map<std::string, std::string>*> member_cells;
    for (const std::size_t i : members) {
      Sum& s = sums[axes_index(g.xs, px[i])][axes_index(g.ys, py[i])];
      s.log_sum += std::log(points[i].speedup);
      s.count += 1;
      s.only = points[i].speedup;
      member_cells.push_back(&cells[i]);
    }
    g.speedup.assign(g.xs.size(), std::vector<std::optional<double>>(g.ys.size()));
    for (std::size_t i = 0; i < g.xs.size(); ++i)
      for (std::size_t j = 0; j < g.ys.size(); ++j)
        if (sums[i][j].count > 0)
          g.speedup[i][j] = sums[i][j].count == 1 && !mean_always ? sums[i][j].only : std::exp(sums[i][j].log_sum / sums[i][j].count);
    std::vector<std::string> parts, spans;
    for (std::size_t c = 0; c < panels.size(); ++c) parts.push_back(panels[c] + " = " + key[c]);
    for (const auto& c : averaged) spans.push_back(axes_span_text(c, member_cells));
    if (!spans.empty()) parts.push_back("geometric mean over " + axes_join(spans));
    g.slice = parts.empty() ? "one point per cell" : axes_join(parts, "; ");
    grids.push_back(std::move(g));
  }
  return grids;
}

std::vector<SpeedupGrid> speedup_grids(const std::vector<SpeedupSample>& points, const SurfaceAxes& axes) {
  const bool averaging = axes.average_all || !axes.average_over.empty();
  return grids_over(points, axes.x, axes.y, panel_columns(points, axes), averaging, axes.is_default());
}

std::vector<std::string> numeric_point_columns(const std::vector<ResultRow>& rows, const std::string& results_file) {
  std::vector<std::string> order;
  std::map<std::string, std::size_t> numeric_rows;  // column -> rows holding a number there
  for (const ResultRow& r : rows)
    for (const auto& [name, text] : axes_ordered_cells(r)) {
      if (!numeric_rows.count(name)) order.push_back(name);
      numeric_rows[name] += csv_finite_number(text) ? 1 : 0;
    }
  std::vector<std::string> columns;
  for (const auto& name : order)
    if (numeric_rows[name] == rows.size()) columns.push_back(name);
  for (const ResultRow& r : rows)
    for (const FigureOverride& f : axes_row_figures(r, results_file))
      if (std::find(columns.begin(), columns.end(), f.path) == columns.end()) columns.push_back(f.path);
  return columns;
}

void require_axis_column(const std::vector<ResultRow>& rows, const std::string& results_file, const std::string& column,
                         const std::string& option) {
  const auto could_be = [&] { return axes_join(numeric_point_columns(rows, results_file)); };
  bool present = false;
  for (const ResultRow& r : rows) {
    const auto cells = row_point_cells(r);
    const auto it = cells.find(column);
    if (it == cells.end()) continue;
    present = true;
    if (!csv_finite_number(it->second))
      throw InputError(results_file + (r.line > 0 ? ":" + std::to_string(r.line) : std::string()), option,
                       "a number in column " + column + " in every row (" + option +
                           " draws the speedup over it; the columns that hold one: " + could_be() + ")",
                       it->second.empty() ? "an empty cell" : "\"" + it->second + "\"");
  }
  if (present) return;
  for (const ResultRow& r : rows)
    for (const FigureOverride& f : axes_row_figures(r, results_file))
      if (f.path == column) return;
  // A column of the run's results (a time, a byte count) may be in the file, but says nothing of the point.
  static const std::set<std::string> not_results = {"op",      "num_inputs", "num_features", "num_outputs", "dtype", "backend",
                                                    "repeat",  "workload",   "knob",         "batch_size",  "point", "run"};
  const auto& op_columns = result_columns();
  const auto& workload_columns = workload_sweep_leading_columns();
  const bool a_result = !not_results.count(column) &&
                        (std::find(op_columns.begin(), op_columns.end(), column) != op_columns.end() ||
                         std::find(workload_columns.begin(), workload_columns.end(), column) != workload_columns.end());
  throw InputError(results_file, option,
                   "a column of the results that identifies a point and holds a number in every row (" + could_be() + ")",
                   a_result ? "\"" + column + "\", a column of the run's results, not of its point"
                            : "no column \"" + column + "\"");
}

void require_known_column(const std::vector<ResultRow>& rows, const std::string& results_file, const std::string& column,
                          const std::string& option) {
  const auto known = axes_known_columns(rows, results_file);
  if (std::find(known.begin(), known.end(), column) == known.end())
    throw InputError(results_file, option, "all, or columns of the results that identify a point (" + axes_join(known) + ")",
                     "no column \"" + column + "\"");
}

void require_axis_values(const std::vector<SpeedupSample>& points, const std::string& results_file, const std::string& column,
                         const std::string& option, const std::string& pair) {
  std::size_t missing = 0;
  for (const auto& p : points)
    if (!csv_finite_number(axes_cell(point_cells(p.id), column))) ++missing;
  if (missing)
    throw InputError(results_file, option,
                     "a number in " + column + " at every point of " + pair +
                         " (a machine figure is one where the target or baseline names the base backend of what-if "
                         "machines: ipu:bow for ipu:bow{" + column + "*=2})",
                     std::to_string(missing) + " of " + std::to_string(points.size()) + " points without one");
}

std::optional<TimeSeries> what_if_family_series(const std::vector<ResultRow>& rows, const std::string& base,
                                                const std::string& results_file) {
  std::vector<ResultRow> family;
  for (const ResultRow& r : rows) {
    if (r.backend == base || what_if_base_backend(r.backend) != base) continue;
    ResultRow member = r;
    member.backend = base;
    for (const FigureOverride& f : axes_row_figures(r, results_file)) member.point_columns[f.path] = axes_exact_text(f.value);
    family.push_back(std::move(member));
  }
  if (family.empty()) return std::nullopt;
  TimeSeries s = series_from_rows(family, base, results_file);
  s.label += ", what-if machines";
  return s;
}

std::string axis_title(const std::vector<ResultRow>& rows, const std::string& results_file, const std::string& column) {
  for (const ResultRow& r : rows)
    if (row_point_cells(r).count(column)) return column;
  for (const ResultRow& r : rows)
    for (const FigureOverride& f : axes_row_figures(r, results_file))
      if (f.path == column) return f.scale ? column + " (× base)" : column;
  return column;
}

}  // namespace tilesim::analysis
