#include "analysis/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>

#include "analysis/intensity.hpp"
#include "analysis/plot_text.hpp"

namespace tilesim::analysis {

namespace {

// One colour per memory level (Okabe-Ito, colour-blind safe), shared by its ceiling and its points.
std::string level_colour(const std::string& level) {
  static const std::map<std::string, std::string> colours = {{"tile_sram", "#0072B2"}, {"exchange", "#E69F00"},
                                                             {"l2", "#009E73"},        {"hbm", "#D55E00"},
                                                             {"dram", "#CC79A7"},      {"llc", "#56B4E9"}};
  const auto it = colours.find(level);
  return it == colours.end() ? "#555555" : it->second;
}

int op_point_type(const std::string& op) { return op == "gather" ? 7 : 9; }  // filled circle, filled triangle

double decade_below(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decade_above(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

std::string ceiling_legend(const Ceiling& c) {
  return c.label + " " + (c.compute ? si_rate(c.value, "FLOP/s") : si_rate(c.value, "B/s"));
}

std::string header(const RooflineMachine& m, const std::string& what) {
  std::ostringstream s;
  s << "# " << what << ": " << m.title << " (" << m.backend << ")\n# ceilings:\n";
  for (const auto& c : m.ceilings)
    s << "#   " << (c.compute ? "compute " : "bandwidth ") << c.name << " = " << gp_number(c.value)
      << (c.compute ? " FLOP/s" : " B/s") << ": " << c.source << "\n";
  for (const auto& f : m.files) s << "# machine file: " << f << "\n";
  for (const auto& n : m.notes) s << "# note: " << n << "\n";
  return s.str();
}

// Data sets by (op, level) in a fixed order, so the script can name each by its index.
struct Series {
  std::string op, level;
  std::vector<const RooflinePoint*> points;
};

std::vector<Series> group(const std::vector<RooflinePoint>& points, bool with_flops_only) {
  std::vector<Series> out;
  for (const char* level : {"tile_sram", "exchange", "l2", "hbm", "dram"})
    for (const char* op : {"gather", "scatter_add"}) {
      Series s{op, level, {}};
      for (const auto& p : points)
        if (p.op == op && p.level == level && p.time_s > 0 && (!with_flops_only || (p.flops > 0 && p.bytes > 0)))
          s.points.push_back(&p);
      if (!s.points.empty()) out.push_back(std::move(s));
    }
  return out;
}

std::string dash_of(const Ceiling& c, int compute_index) {
  if (c.compute) return compute_index == 0 ? "1" : (compute_index == 1 ? "2" : "4");
  return c.secondary ? "3" : "1";
}

// The log-log frame both figures share: ranges widened to whole decades, axes, grid and a legend under
// the plot (points and ceilings fill every corner of a roofline).
struct LogFrame {
  double x_lo, x_hi, y_lo, y_hi;
  void include(double x, double y) {
    x_lo = std::min(x_lo, x / 2);
    x_hi = std::max(x_hi, x * 2);
    y_lo = std::min(y_lo, y / 2);
    y_hi = std::max(y_hi, y * 2);
  }
  // `key_entries`: the legend's lines, one per ceiling and series, listed in one column below the plot
  // (the figure grows to hold them: column_figure).
  std::string script(const std::string& title, const std::string& xlabel, const std::string& ylabel, std::size_t key_entries) const {
    std::ostringstream b;
    b << "set title " << gp_quoted(title) << " font \",11\"\n"
      << "set logscale xy 10\n"
      << "set xrange [" << gp_number(decade_below(x_lo)) << ":" << gp_number(decade_above(x_hi)) << "]\n"
      << "set yrange [" << gp_number(decade_below(y_lo)) << ":" << gp_number(decade_above(y_hi * 1.5)) << "]\n"
      << "set format x \"10^{%L}\"\nset format y \"10^{%L}\"\n"
      << "set xlabel " << gp_quoted(xlabel) << "\n"
      << "set ylabel " << gp_quoted(ylabel) << "\n"
      << "set grid xtics ytics linecolor rgb \"#e0e0e0\"\n"
      << "set key outside below center vertical maxrows " << std::max<std::size_t>(key_entries, 1)
      << " Left reverse font \",8\" spacing 1 samplen 1.5 width -3 height 1.2\n";
    return b.str();
  }
};

// A column-wide figure: the plot, then the legend below it, one line per entry. The plot keeps its
// size and the figure grows by a legend line's height (font 8 at spacing 1: 11 px) per entry past the
// three the base height holds, so no ceiling or series loses its label however many there are.
GnuplotFigure column_figure(const std::string& stem, const std::string& description, std::size_t key_entries) {
  constexpr int base_height_px = 360, key_line_px = 11, key_lines_in_base = 3;
  GnuplotFigure fig;
  fig.stem = stem;
  fig.description = description;
  fig.width_px = 400;
  fig.height_px = base_height_px + key_line_px * std::max(0, static_cast<int>(key_entries) - key_lines_in_base);
  fig.font_pt = 10;
  fig.pdf = true;
  return fig;
}

// One points series per (op, level), coloured by level, shaped by op.
std::string series_plot(const Series& s, std::size_t index) {
  return "datafile index " + std::to_string(index) + " using 1:2 with points pointtype " +
         std::to_string(op_point_type(s.op)) + " pointsize 0.55 linecolor rgb \"" + level_colour(s.level) +
         "\" title " + gp_quoted(s.op + " at " + level_label(s.level));
}

std::string plot_command(const std::vector<std::string>& plots) {
  std::string text = "plot ";
  for (std::size_t i = 0; i < plots.size(); ++i) text += (i ? ", \\\n     " : "") + plots[i];
  return text + "\n";
}


}  // namespace

std::vector<RooflinePoint> roofline_points(const std::vector<ResultRow>& rows, const std::string& backend) {
  std::vector<RooflinePoint> out;
  for (const auto& r : rows) {
    if (r.backend != backend || !r.time_s || !(*r.time_s > 0)) continue;
    for (const auto& t : traffic_by_level(r)) out.push_back({r.op, r.shape, t.level, r.flops, t.bytes, *r.time_s});
  }
  return out;
}

double attainable_flops_per_s(double peak_flops_per_s, double bytes_per_s, double intensity) {
  return std::min(peak_flops_per_s, bytes_per_s * intensity);
}

double ridge_intensity(double peak_flops_per_s, double bytes_per_s) { return peak_flops_per_s / bytes_per_s; }

GnuplotFigure roofline_figure(const RooflineMachine& m, const std::vector<RooflinePoint>& points, const std::string& stem) {
  if (m.ceilings.empty()) throw std::invalid_argument("roofline_figure: " + m.backend + " has no ceilings");
  double peak = 0, bandwidth = 0;
  for (const auto& c : m.ceilings) (c.compute ? peak : bandwidth) = std::max(c.compute ? peak : bandwidth, c.value);
  const auto series = group(points, true);

  // Axes: every point, every ridge and a decade either side.
  LogFrame frame{1e-2, 1e2, 1e9, 1e12};
  if (peak > 0) frame.y_hi = std::max(frame.y_hi, peak);
  if (peak > 0 && bandwidth > 0) {
    frame.x_hi = std::max(frame.x_hi, ridge_intensity(peak, bandwidth) * 10);
    for (const auto& c : m.ceilings)
      if (!c.compute) frame.x_hi = std::max(frame.x_hi, ridge_intensity(peak, c.value) * 3);
  }
  for (const auto& s : series)
    for (const auto* p : s.points) frame.include(*p->intensity(), p->flops_per_s());

  const std::size_t key_entries = m.ceilings.size() + series.size();
  GnuplotFigure fig = column_figure(stem, "roofline of " + m.title + " (" + m.backend + ")", key_entries);
  std::ostringstream data;
  data << header(m, "roofline")
       << "# One data set per (op, level): intensity_flops_per_byte flops_per_s num_inputs num_features num_outputs\n";
  for (const auto& s : series) {
    data << "# " << s.op << " at " << s.level << "\n";
    for (const auto* p : s.points)
      data << gp_number(*p->intensity()) << " " << gp_number(p->flops_per_s()) << " " << p->shape.num_inputs << " "
           << p->shape.num_features << " " << p->shape.num_outputs << "\n";
    data << "\n\n";
  }
  if (series.empty()) data << "# no op with FLOPs (gather does none): see the bandwidth figure\n";
  fig.data = data.str();

  std::ostringstream b;
  b << frame.script("Roofline: " + m.title, "arithmetic intensity (FLOP/byte)", "performance (FLOP/s)", key_entries)
    << "set samples 2000\n"
    << "P = " << gp_number(peak) << "\nB = " << gp_number(bandwidth) << "\n";
  std::vector<std::string> plots;
  int compute_index = 0;
  for (std::size_t i = 0; i < m.ceilings.size(); ++i) {
    const Ceiling& c = m.ceilings[i];
    const std::string f = "ceiling" + std::to_string(i);
    if (c.compute) {
      // A compute roof starts where the fastest memory level reaches it.
      b << f << "(x) = (B <= 0 || x >= " << gp_number(c.value) << " / B) ? " << gp_number(c.value) << " : 1/0\n";
      plots.push_back(f + "(x) with lines linewidth 2 dashtype " + dash_of(c, compute_index++) +
                      " linecolor rgb \"#222222\" title " + gp_quoted(ceiling_legend(c)));
    } else {
      b << f << "(x) = (P <= 0 || x * " << gp_number(c.value) << " <= P) ? x * " << gp_number(c.value) << " : 1/0\n";
      plots.push_back(f + "(x) with lines linewidth 2 dashtype " + dash_of(c, 0) + " linecolor rgb \"" +
                      level_colour(c.name) + "\" title " + gp_quoted(ceiling_legend(c)));
    }
  }
  for (std::size_t k = 0; k < series.size(); ++k) plots.push_back(series_plot(series[k], k));
  bool has_gather = false;
  for (const auto& p : points) has_gather = has_gather || p.op == "gather";
  if (has_gather)
    b << "set label 1 " << gp_quoted("gather: 0 FLOPs, see the bandwidth figure") << " at graph 0.98, graph 0.05 right font \",8\"\n";
  b << plot_command(plots);
  fig.body = b.str();
  return fig;
}

GnuplotFigure bandwidth_figure(const RooflineMachine& m, const std::vector<RooflinePoint>& points, const std::string& stem) {
  std::vector<const Ceiling*> bandwidths;
  for (const auto& c : m.ceilings)
    if (!c.compute) bandwidths.push_back(&c);
  if (bandwidths.empty()) throw std::invalid_argument("bandwidth_figure: " + m.backend + " has no bandwidth ceiling");
  const auto series = group(points, false);

  LogFrame frame{1e3, 1e6, 1e9, 1e10};
  for (const auto* c : bandwidths) frame.y_hi = std::max(frame.y_hi, c->value);
  for (const auto& s : series)
    for (const auto* p : s.points)
      if (p->bytes > 0) frame.include(p->bytes, p->bytes_per_s());

  const std::size_t key_entries = bandwidths.size() + series.size();
  GnuplotFigure fig =
      column_figure(stem, "achieved bandwidth of " + m.title + " (" + m.backend + ") against bytes moved", key_entries);
  std::ostringstream data;
  data << header(m, "bandwidth") << "# One data set per (op, level): bytes bytes_per_s num_inputs num_features num_outputs\n";
  for (const auto& s : series) {
    data << "# " << s.op << " at " << s.level << "\n";
    for (const auto* p : s.points)
      if (p->bytes > 0)
        data << gp_number(p->bytes) << " " << gp_number(p->bytes_per_s()) << " " << p->shape.num_inputs << " "
             << p->shape.num_features << " " << p->shape.num_outputs << "\n";
    data << "\n\n";
  }
  fig.data = data.str();

  std::ostringstream b;
  b << frame.script("Bandwidth: " + m.title, "bytes moved per op at the level (B)", "achieved bandwidth (B/s)", key_entries);
  std::vector<std::string> plots;
  for (const auto* c : bandwidths)
    plots.push_back(gp_number(c->value) + " with lines linewidth 2 dashtype " + dash_of(*c, 0) + " linecolor rgb \"" +
                    level_colour(c->name) + "\" title " + gp_quoted(ceiling_legend(*c)));
  for (std::size_t k = 0; k < series.size(); ++k) plots.push_back(series_plot(series[k], k));
  b << plot_command(plots);
  fig.body = b.str();
  return fig;
}

}  // namespace tilesim::analysis
