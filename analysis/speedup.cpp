#include "analysis/speedup.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "analysis/speedup_axes.hpp"
#include "backends/registry.hpp"
#include "common/error.hpp"
#include "fitting/error_metrics.hpp"

namespace tilesim::analysis {

namespace fs = std::filesystem;

namespace {

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

double median_of(std::vector<double> v) { return fitting::quantile(std::move(v), 0.5); }

std::int64_t min_bytes_of(const PointId& id) {
  Op op;
  op.kind = id.op == "gather" ? OpKind::gather : OpKind::scatter_add;
  op.shape = id.shape;
  return op.min_bytes();
}

struct Measure {
  const char* name;
  double (*of)(const PointId&);
};

const std::vector<Measure>& measures() {
  static const std::vector<Measure> all = {
      {"num_inputs", [](const PointId& p) { return static_cast<double>(p.shape.num_inputs); }},
      {"num_features", [](const PointId& p) { return static_cast<double>(p.shape.num_features); }},
      {"num_outputs", [](const PointId& p) { return static_cast<double>(p.shape.num_outputs); }},
      {"output_elements",
       [](const PointId& p) { return static_cast<double>(p.shape.num_outputs) * static_cast<double>(p.shape.num_features); }},
      {"min_bytes", [](const PointId& p) { return static_cast<double>(min_bytes_of(p)); }}};
  return all;
}

std::string measure_value_text(const std::string& measure, double value) {
  char buf[64];
  if (measure == "min_bytes") {
    if (value >= 1024.0 * 1024.0) std::snprintf(buf, sizeof buf, "%.3g MiB", value / (1024.0 * 1024.0));
    else if (value >= 1024.0) std::snprintf(buf, sizeof buf, "%.3g KiB", value / 1024.0);
    else std::snprintf(buf, sizeof buf, "%.0f B", value);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.0f", value);
  return buf;
}

}  // namespace

std::string series_label(const std::string& name, const std::string& kind, const std::string& mode) {
  if (auto label = backends::display_label(name, kind, mode)) return *label;
  // A reference: a directory named after the machine, or a file inside one.
  fs::path p = fs::path(name).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();  // "dir/" names the directory
  std::error_code ec;
  std::string machine = fs::is_directory(p, ec) ? p.filename().string() : p.parent_path().filename().string();
  if (machine.empty()) machine = p.stem().string();
  return (machine == "bow" ? std::string("Bow IPU") : upper(machine)) + " (" + (kind.empty() ? "measured" : kind) + ")";
}

TimeSeries series_from_rows(const std::vector<ResultRow>& rows, const std::string& backend, const std::string& file) {
  TimeSeries s;
  s.name = backend;
  std::map<PointId, std::vector<double>> times, disturbed_times;
  bool any = false;
  for (const auto& r : rows) {
    if (r.backend != backend) continue;
    any = true;
    s.kind = r.kind;
    s.mode = r.mode;
    if (r.time_s)
      (r.disturbed.empty() ? times : disturbed_times)[{r.op, r.shape, r.dtype, r.point_columns}].push_back(*r.time_s);
  }
  if (!any) {
    std::vector<std::string> present;
    for (const auto& r : rows)
      if (std::find(present.begin(), present.end(), r.backend) == present.end()) present.push_back(r.backend);
    throw InputError(file, "", "a backend with rows in this file (" + join(present) + ")", "\"" + backend + "\"");
  }
  for (auto& [id, t] : times) s.time_s[id] = median_of(t);
  // A point only disturbed repeats measured keeps their median, marked.
  for (auto& [id, t] : disturbed_times)
    if (!s.time_s.count(id)) {
      s.time_s[id] = median_of(t);
      s.disturbed.insert(id);
    }
  s.label = series_label(backend, s.kind, s.mode);
  return s;
}

TimeSeries series_from_reference(const std::vector<MeasuredPoint>& points, const std::string& name, const std::string& label) {
  TimeSeries s;
  s.name = name;
  s.label = label;
  s.kind = "measured";
  for (const auto& p : points) s.time_s[{p.op, p.shape, "float32"}] = p.time_s;
  return s;
}

TimeSeries resolve_series(const std::vector<ResultRow>& rows, const std::string& results_file, const std::string& spec,
                          const std::vector<std::string>& ops) {
  for (const auto& r : rows)
    if (r.backend == spec) return series_from_rows(rows, spec, results_file);
  std::error_code ec;
  if (fs::is_directory(spec, ec)) {
    std::vector<MeasuredPoint> all;
    for (const auto& op : ops) {
      const std::string path = (fs::path(spec) / (op + ".csv")).string();
      if (!fs::is_regular_file(path, ec))
        throw InputError(path, "", "a hydronet reference CSV for " + op + " in the directory " + spec, "no such file");
      const auto points = read_hydronet_csv(path, op);
      all.insert(all.end(), points.begin(), points.end());
    }
    return series_from_reference(all, spec, series_label(spec, "measured", ""));
  }
  if (fs::is_regular_file(spec, ec)) {
    const std::string op = fs::path(spec).stem().string();
    return series_from_reference(read_hydronet_csv(spec, op), spec, series_label(spec, "measured", ""));
  }
  std::vector<std::string> present;
  for (const auto& r : rows)
    if (std::find(present.begin(), present.end(), r.backend) == present.end()) present.push_back(r.backend);
  throw InputError(results_file, "",
                   "a backend with rows in this file (" + join(present) +
                       ") or a hydronet reference CSV file or directory (validation/hydronet-gnn/a100)",
                   "\"" + spec + "\"");
}

namespace {

// The column names a series' points carry (PointId::columns).
std::set<std::string> series_columns(const TimeSeries& s) {
  std::set<std::string> names;
  for (const auto& [id, t] : s.time_s)
    for (const auto& [name, cell] : id.columns) names.insert(name);
  return names;
}

// `id` with only the columns in `keep`: what it is matched on against a series with other columns.
PointId restricted_id(PointId id, const std::set<std::string>& keep) {
  for (auto it = id.columns.begin(); it != id.columns.end();)
    it = keep.count(it->first) ? std::next(it) : id.columns.erase(it);
  return id;
}

SpeedupSample speedup_sample(const PointId& id, const TimeSeries& baseline, const PointId& baseline_id, double baseline_s,
                             const TimeSeries& target, const PointId& target_id, double target_s) {
  SpeedupSample sample{id, baseline_s, target_s, baseline_s / target_s};
  sample.disturbed = baseline.disturbed.count(baseline_id) > 0 || target.disturbed.count(target_id) > 0;
  return sample;
}

}  // namespace

std::vector<SpeedupSample> paired_speedups(const TimeSeries& baseline, const TimeSeries& target, const std::string& op) {
  std::vector<SpeedupSample> out;
  const std::set<std::string> baseline_columns = series_columns(baseline), target_columns = series_columns(target);
  if (baseline_columns == target_columns) {
    // The same columns on both sides (always so for two backends of one file): one point, one partner.
    for (const auto& [id, t] : target.time_s) {
      if (!op.empty() && id.op != op) continue;
      const auto b = baseline.time_s.find(id);
      if (b != baseline.time_s.end()) out.push_back(speedup_sample(id, baseline, id, b->second, target, id, t));
    }
    return out;
  }
  // Matched on the columns both carry; the sample keeps the columns of both.
  std::set<std::string> shared;
  for (const auto& name : baseline_columns)
    if (target_columns.count(name)) shared.insert(name);
  std::multimap<PointId, const std::pair<const PointId, double>*> baseline_by_key;
  for (const auto& entry : baseline.time_s)
    if (op.empty() || entry.first.op == op) baseline_by_key.emplace(restricted_id(entry.first, shared), &entry);
  for (const auto& [id, t] : target.time_s) {
    if (!op.empty() && id.op != op) continue;
    const auto [first, last] = baseline_by_key.equal_range(restricted_id(id, shared));
    for (auto it = first; it != last; ++it) {
      PointId both = id;
      both.columns.insert(it->second->first.columns.begin(), it->second->first.columns.end());
      out.push_back(speedup_sample(both, baseline, it->second->first, it->second->second, target, id, t));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const SpeedupSample& a, const SpeedupSample& b) { return a.id < b.id; });
  return out;
}

std::vector<SpeedupGrid> grids_per_feature(const std::vector<SpeedupSample>& points) {
  // Every panel spans the same axes, so panels of one figure line up.
  return grids_over(points, "num_inputs", "num_outputs", {"num_features"}, false, true);
}

SpeedupGrid grid_averaged_over_features(const std::vector<SpeedupSample>& points) {
  std::vector<SpeedupGrid> grids = grids_over(points, "num_inputs", "num_outputs", {}, true, true);
  SpeedupGrid g = grids.empty() ? SpeedupGrid() : std::move(grids.front());
  std::set<std::int64_t> features;
  for (const auto& p : points) features.insert(p.id.shape.num_features);
  g.slice = features.empty() ? "no points"
            : features.size() == 1
                ? "num_features = " + std::to_string(*features.begin())
                : "geometric mean over num_features " + std::to_string(*features.begin()) + "-" +
                      std::to_string(*features.rbegin());
  return g;
}

std::vector<Segment> unit_contour(const SpeedupGrid& g) {
  std::vector<Segment> segments;
  if (g.xs.size() < 2 || g.ys.size() < 2) return segments;
  for (std::size_t i = 0; i + 1 < g.xs.size(); ++i) {
    for (std::size_t j = 0; j + 1 < g.ys.size(); ++j) {
      // Corners counter-clockwise from bottom left: (i,j), (i+1,j), (i+1,j+1), (i,j+1).
      const std::size_t ci[4] = {i, i + 1, i + 1, i};
      const std::size_t cj[4] = {j, j, j + 1, j + 1};
      double v[4], px[4], py[4];
      bool complete = true;
      for (int k = 0; k < 4; ++k) {
        const auto& s = g.speedup[ci[k]][cj[k]];
        if (!s) {
          complete = false;
          break;
        }
        v[k] = std::log(*s);
        px[k] = g.x_log ? std::log2(g.xs[ci[k]]) : g.xs[ci[k]];
        py[k] = g.y_log ? std::log2(g.ys[cj[k]]) : g.ys[cj[k]];
      }
      if (!complete) continue;
      // Crossing points on edges k -> k+1 (bottom, right, top, left), -1 when the edge does not cross.
      double ex[4], ey[4];
      bool crosses[4];
      int count = 0;
      for (int k = 0; k < 4; ++k) {
        const int a = k, b = (k + 1) % 4;
        crosses[k] = (v[a] > 0) != (v[b] > 0);
        if (!crosses[k]) continue;
        const double t = v[a] / (v[a] - v[b]);
        ex[k] = px[a] + t * (px[b] - px[a]);
        ey[k] = py[a] + t * (py[b] - py[a]);
        ++count;
      }
      const auto x_of = [&](double c) { return g.x_log ? std::exp2(c) : c; };
      const auto y_of = [&](double c) { return g.y_log ? std::exp2(c) : c; };
      auto add = [&](int e0, int e1) { segments.push_back({x_of(ex[e0]), y_of(ey[e0]), x_of(ex[e1]), y_of(ey[e1])}); };
      if (count == 2) {
        int first = -1, second = -1;
        for (int k = 0; k < 4; ++k)
          if (crosses[k]) (first < 0 ? first : second) = k;
        add(first, second);
      } else if (count == 4) {
        // A saddle: the corners on the centre's side are joined through the middle; the other two are
        // cut off, each by the segment between its two edges. Corner k touches edges k-1 and k.
        const double centre = (v[0] + v[1] + v[2] + v[3]) / 4;
        const bool centre_positive = centre > 0;
        for (int k = 0; k < 4; ++k)
          if ((v[k] > 0) != centre_positive) add((k + 3) % 4, k);
      }
    }
  }
  return segments;
}

Crossover find_crossover(const std::vector<SpeedupSample>& points) {
  Crossover best;
  const std::size_t n = points.size();
  std::size_t faster = 0;
  for (const auto& p : points) faster += p.speedup > 1 ? 1 : 0;
  if (n == 0) {
    best.text = "no points";
    return best;
  }
  if (faster == 0 || faster == n) {
    best.agreement = 1;
    best.text = faster == n ? "none: faster at every point" : "none: slower at every point";
    return best;
  }
  const double trivial = static_cast<double>(std::max(faster, n - faster)) / static_cast<double>(n);
  double best_agreement = trivial;
  for (const auto& m : measures()) {
    std::vector<std::pair<double, bool>> v;
    for (const auto& p : points) v.push_back({m.of(p.id), p.speedup > 1});
    std::sort(v.begin(), v.end());
    // Walk the thresholds between distinct values, counting the faster points at or below each.
    std::size_t below = 0, faster_below = 0;
    for (std::size_t k = 0; k + 1 < v.size(); ++k) {
      ++below;
      faster_below += v[k].second ? 1 : 0;
      if (v[k].first == v[k + 1].first) continue;
      const std::size_t above = n - below, faster_above = faster - faster_below;
      const double if_above = static_cast<double>(faster_above + (below - faster_below)) / static_cast<double>(n);
      const double if_below = static_cast<double>(faster_below + (above - faster_above)) / static_cast<double>(n);
      const bool above_wins = if_above >= if_below;
      const double agreement = above_wins ? if_above : if_below;
      if (agreement > best_agreement + 1e-12) {
        best_agreement = agreement;
        best.exists = true;
        best.measure = m.name;
        best.below = v[k].first;
        best.above = v[k + 1].first;
        best.target_faster_above = above_wins;
        best.agreement = agreement;
      }
    }
  }
  if (!best.exists) {
    best.agreement = trivial;
    best.text = "no single size threshold (faster at " + share_percent(static_cast<double>(faster) / static_cast<double>(n)) +
                " of points)";
    return best;
  }
  best.text = "faster where " + best.measure +
              (best.target_faster_above ? " >= " + measure_value_text(best.measure, best.above)
                                        : " <= " + measure_value_text(best.measure, best.below)) +
              " (" + share_percent(best.agreement) + " of points agree)";
  return best;
}

SpeedupStats summarize_speedups(const std::vector<SpeedupSample>& points) {
  SpeedupStats s;
  s.count = points.size();
  s.crossover = find_crossover(points);
  if (points.empty()) {
    s.median = s.geomean = s.min = s.max = std::nan("");
    return s;
  }
  std::vector<double> v;
  double log_sum = 0;
  std::size_t faster = 0;
  for (const auto& p : points) {
    v.push_back(p.speedup);
    log_sum += std::log(p.speedup);
    faster += p.speedup > 1 ? 1 : 0;
  }
  s.median = median_of(v);
  s.geomean = std::exp(log_sum / static_cast<double>(v.size()));
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  s.target_faster_share = static_cast<double>(faster) / static_cast<double>(v.size());
  return s;
}

std::string share_percent(double share) {
  char buf[32];
  for (int decimals = 0; decimals < 6; ++decimals) {
    std::snprintf(buf, sizeof buf, "%.*f", decimals, 100.0 * share);
    const double shown = std::strtod(buf, nullptr);
    if ((share < 1.0 && shown >= 100.0) || (share > 0.0 && shown <= 0.0)) continue;
    break;
  }
  return std::string(buf) + "%";
}

std::string format_speedup(double speedup) {
  if (!std::isfinite(speedup)) return "-";
  char buf[32];
  if (speedup >= 100) std::snprintf(buf, sizeof buf, "%.0f", speedup);
  else if (speedup >= 10) std::snprintf(buf, sizeof buf, "%.1f", speedup);
  else if (speedup >= 1) std::snprintf(buf, sizeof buf, "%.2f", speedup);
  else std::snprintf(buf, sizeof buf, "%.3g", speedup);
  return buf;
}

}  // namespace tilesim::analysis
