#include "analysis/scaling_figure.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "analysis/plot_text.hpp"
#include "common/error.hpp"
#include "common/strict_json.hpp"

namespace tilesim::analysis {

namespace {

// The value at `path` (dotted keys) of `entry`, checked to be what `accept` says.
template <class Accept>
const nlohmann::json& field(const nlohmann::json& entry, const std::string& file, const std::string& at, const std::string& path,
                            const std::string& expected, Accept accept) {
  const nlohmann::json* v = &entry;
  std::string walked = at;
  std::stringstream keys(path);
  for (std::string key; std::getline(keys, key, '.');) {
    walked += (walked.empty() ? "" : ".") + key;
    if (!v->is_object() || !v->contains(key)) throw InputError(file, walked, expected, "nothing");
    v = &(*v)[key];
  }
  if (!accept(*v)) throw InputError(file, walked, expected, describe_json(*v));
  return *v;
}

double number_at(const nlohmann::json& e, const std::string& file, const std::string& at, const std::string& path) {
  return field(e, file, at, path, "a number >= 0", [](const nlohmann::json& v) { return v.is_number() && v.get<double>() >= 0; }).get<double>();
}
std::int64_t count_at(const nlohmann::json& e, const std::string& file, const std::string& at, const std::string& path) {
  return field(e, file, at, path, "a positive integer", [](const nlohmann::json& v) { return v.is_number_integer() && v.get<std::int64_t>() >= 1; })
      .get<std::int64_t>();
}
std::string text_at(const nlohmann::json& e, const std::string& file, const std::string& at, const std::string& path) {
  return field(e, file, at, path, "a string", [](const nlohmann::json& v) { return v.is_string(); }).get<std::string>();
}

struct ScalingSeries {
  std::string label;
  std::vector<const ScalingPoint*> points;
};

// Points grouped in order of first appearance by `key`, each group sorted by `x`.
template <class Key, class X>
std::vector<ScalingSeries> group(const std::vector<const ScalingPoint*>& points, Key key, X x) {
  std::vector<ScalingSeries> out;
  std::map<std::string, std::size_t> at;
  for (const ScalingPoint* p : points) {
    const std::string k = key(*p);
    if (!at.count(k)) {
      at[k] = out.size();
      out.push_back({k, {}});
    }
    out[at[k]].points.push_back(p);
  }
  for (ScalingSeries& s : out)
    std::stable_sort(s.points.begin(), s.points.end(), [&](const ScalingPoint* a, const ScalingPoint* b) { return x(*a) < x(*b); });
  return out;
}

// Tick marks at 1, 2 and 5 times the powers of ten within [lo, hi] for a log axis, labelled with an SI
// prefix ("20k"), so a range under one decade still reads.
std::string log_ticks(const char* axis, double lo, double hi) {
  const char* const prefixes[] = {"", "k", "M", "G", "T"};
  std::ostringstream out;
  out << "set " << axis << "tics (";
  bool first = true;
  for (int e = static_cast<int>(std::floor(std::log10(lo))); e <= static_cast<int>(std::ceil(std::log10(hi))); ++e) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      if (v < lo || v > hi) continue;
      const int p = std::max(0, std::min(4, e / 3));
      char label[32];
      std::snprintf(label, sizeof label, "%g%s", v / std::pow(1000.0, p), prefixes[p]);
      out << (first ? "" : ", ") << "\"" << label << "\" " << short_number(v);
      first = false;
    }
  }
  out << ")\n";
  return first ? std::string() : out.str();
}

std::string unit_words(const std::string& unit) {
  std::string u = unit;
  const std::string suffix = "_per_s";
  if (u.size() > suffix.size() && u.compare(u.size() - suffix.size(), suffix.size(), suffix) == 0) u.resize(u.size() - suffix.size());
  std::replace(u.begin(), u.end(), '_', ' ');
  return u;
}

}  // namespace

std::string series_of(const std::string& name) {
  const auto cut = name.rfind('_');
  if (cut == std::string::npos || cut == 0) return name;
  const std::string tail = name.substr(cut + 1);
  std::size_t letters = 0;
  while (letters < tail.size() && std::isalpha(static_cast<unsigned char>(tail[letters]))) ++letters;
  const bool digits = letters < tail.size() &&
                      std::all_of(tail.begin() + static_cast<std::ptrdiff_t>(letters), tail.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  return digits ? name.substr(0, cut) : name;
}

std::vector<ScalingPoint> read_scaling_reports(const std::vector<std::string>& paths) {
  std::vector<ScalingPoint> points;
  for (const std::string& file : paths) {
    const nlohmann::json report = load_json_file(file);
    if (!report.is_object() || !report.contains("scaling"))
      throw InputError(file, "scaling", "the report of a workload with a \"parallel\" section (tilesim run on one)", "no \"scaling\"");
    const nlohmann::json& scaling = report["scaling"];
    if (!scaling.is_array() || scaling.empty()) throw InputError(file, "scaling", "a non-empty array", describe_json(scaling));
    const std::string workload = field(report, file, "", "workload.name", "a string", [](const nlohmann::json& v) { return v.is_string(); })
                                     .get<std::string>();
    for (std::size_t i = 0; i < scaling.size(); ++i) {
      const nlohmann::json& e = scaling[i];
      const std::string at = "scaling[" + std::to_string(i) + "]";
      ScalingPoint p;
      p.report = file;
      p.workload = workload;
      p.series = series_of(workload);
      p.backend = text_at(e, file, at, "backend");
      p.kind = text_at(e, file, at, "step.kinds.compute");
      p.devices = count_at(e, file, at, "devices_used");
      p.replicas = count_at(e, file, at, "parallel.replicas");
      p.partitions = count_at(e, file, at, "parallel.partitions");
      if (e.contains("pipeline")) {
        p.stages = count_at(e, file, at, "pipeline.stages");
        p.micro_batches = count_at(e, file, at, "pipeline.micro_batches");
        p.schedule = text_at(e, file, at, "pipeline.schedule");
        p.bubble_share = number_at(e, file, at, "pipeline.bubble_share");
      }
      p.unit = text_at(e, file, at, "throughput.unit");
      p.throughput_per_s = number_at(e, file, at, "throughput.value");
      p.step_time_s = number_at(e, file, at, "step.time_s");
      if (e.contains("scaling_efficiency") && !e["scaling_efficiency"].is_null()) p.efficiency = number_at(e, file, at, "scaling_efficiency");
      points.push_back(p);
    }
  }
  return points;
}

GnuplotFigure scaling_throughput_figure(const std::vector<ScalingPoint>& all) {
  std::vector<const ScalingPoint*> points;
  for (const ScalingPoint& p : all)
    if (p.schedule.empty()) points.push_back(&p);
  if (points.empty()) throw InputError("", "REPORT.json", "reports of replicas or partitions (throughput versus chips)", "pipelines only");
  std::set<std::string> series_names;
  for (const ScalingPoint* p : points) series_names.insert(p->series);
  const bool several = series_names.size() > 1;
  const auto lines = group(points, [&](const ScalingPoint& p) { return (several ? p.series + ": " : "") + p.backend + " (" + p.kind + ")"; },
                           [](const ScalingPoint& p) { return p.devices; });
  GnuplotFigure fig;
  fig.stem = "scaling_throughput";
  fig.description = "throughput versus chips used, one line per system";
  fig.width_px = 560;
  fig.height_px = 400;
  fig.pdf = true;
  std::ostringstream data, plot;
  double lo = INFINITY, hi = 0;
  std::int64_t most = 1;
  for (std::size_t l = 0; l < lines.size(); ++l) {
    if (l) data << "\n\n";
    data << "# " << lines[l].label << ": devices " << lines[l].points.front()->unit << " efficiency report\n";
    for (const ScalingPoint* p : lines[l].points) {
      data << p->devices << " " << short_number(p->throughput_per_s) << " " << short_number(p->efficiency) << " " << p->report << "\n";
      lo = std::min(lo, p->throughput_per_s);
      hi = std::max(hi, p->throughput_per_s);
      most = std::max(most, p->devices);
    }
    plot << (l ? ", \\\n     " : "plot ") << "datafile index " << l << " using 1:2 with linespoints lw 1.5 pt 7 ps 0.7 lc rgb \""
         << kSeriesColours[l % (sizeof kSeriesColours / sizeof *kSeriesColours)] << "\" title " << gp_quoted(lines[l].label);
  }
  fig.data = data.str();
  const std::string unit = unit_words(points.front()->unit);
  std::ostringstream body;
  body << "set title " << gp_quoted((several ? std::string("scaling") : points.front()->series) + ": throughput versus chips") << "\n"
       << "set xlabel \"chips (IPUs, GPUs or CPU nodes) used\"\n"
       << "set ylabel " << gp_quoted(unit + " per second") << "\n"
       << "set logscale x 2\nset logscale y 10\n"
       << "set xrange [0.8:" << short_number(static_cast<double>(most) * 1.25) << "]\n"
       << "set format x \"%g\"\nset format y \"%.0s%c\"\n"
       << "set grid xtics ytics lc rgb \"#dddddd\" lw 0.5\n"
       << "set key below Left reverse samplen 1.5 height 1.5\n";  // height: clear of the x label
  if (hi > 0) body << "set yrange [" << short_number(lo / 1.5) << ":" << short_number(hi * 1.5) << "]\n" << log_ticks("y", lo / 1.5, hi * 1.5);
  body << plot.str() << "\n";
  fig.body = body.str();
  return fig;
}

GnuplotFigure pipeline_step_figure(const std::vector<ScalingPoint>& all) {
  std::vector<const ScalingPoint*> points;
  for (const ScalingPoint& p : all)
    if (p.stages > 1 || !p.schedule.empty()) points.push_back(&p);
  if (points.empty()) throw InputError("", "REPORT.json", "reports of pipelines (step time versus micro-batches)", "no pipeline");
  std::set<std::string> series_names;
  for (const ScalingPoint* p : points) series_names.insert(p->series);
  const bool several = series_names.size() > 1;
  const auto lines = group(
      points,
      [&](const ScalingPoint& p) {
        return (several ? p.series + ": " : "") + p.backend + " (" + p.kind + "), " + std::to_string(p.stages) + " stages, " + p.schedule;
      },
      [](const ScalingPoint& p) { return p.micro_batches; });
  GnuplotFigure fig;
  fig.stem = "scaling_pipeline";
  fig.description = "pipelined step time versus micro-batches, one line per system";
  fig.width_px = 560;
  fig.height_px = 400;
  fig.pdf = true;
  std::ostringstream data, plot;
  double lo = INFINITY, hi = 0;
  std::int64_t most = 1;
  for (std::size_t l = 0; l < lines.size(); ++l) {
    if (l) data << "\n\n";
    data << "# " << lines[l].label << ": micro_batches step_time_ms bubble_share report\n";
    for (const ScalingPoint* p : lines[l].points) {
      data << p->micro_batches << " " << short_number(p->step_time_s * 1e3) << " " << short_number(p->bubble_share) << " " << p->report << "\n";
      lo = std::min(lo, p->step_time_s * 1e3);
      hi = std::max(hi, p->step_time_s * 1e3);
      most = std::max(most, p->micro_batches);
    }
    plot << (l ? ", \\\n     " : "plot ") << "datafile index " << l << " using 1:2 with linespoints lw 1.5 pt 7 ps 0.7 lc rgb \""
         << kSeriesColours[l % (sizeof kSeriesColours / sizeof *kSeriesColours)] << "\" title " << gp_quoted(lines[l].label);
  }
  fig.data = data.str();
  std::ostringstream body;
  body << "set title " << gp_quoted((several ? std::string("pipelines") : points.front()->series) + ": step time versus micro-batches") << "\n"
       << "set xlabel \"micro-batches per step\"\n"
       << "set ylabel \"step time (ms)\"\n"
       << "set logscale x 2\n"
       << "set xrange [0.8:" << short_number(static_cast<double>(most) * 1.25) << "]\n"
       << "set format x \"%g\"\nset format y \"%g\"\n"
       << "set grid xtics ytics lc rgb \"#dddddd\" lw 0.5\n"
       << "set key below Left reverse samplen 1.5 height 1.5\n";  // height: clear of the x label
  if (hi > 0) body << "set yrange [0:" << short_number(hi * 1.15) << "]\n";
  body << plot.str() << "\n";
  fig.body = body.str();
  return fig;
}

}  // namespace tilesim::analysis
