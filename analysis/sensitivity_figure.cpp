#include "analysis/sensitivity_figure.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

#include "analysis/plot_text.hpp"

namespace tilesim::analysis {

namespace {

std::string value_label(const SensitivityCurve& c) {
  return c.scale ? c.figure + " (factor on the base machine's)" : c.figure;
}

// A label read from the data file into a double-quoted field: its own quotes left out.
std::string data_label(const std::string& text) {
  std::string out;
  for (char c : text)
    if (c != '"') out += c;
  return out;
}

// The least and the most median relative time over a curve's values.
std::pair<double, double> span_of(const SensitivityCurve& c) {
  double lo = INFINITY, hi = 0;
  for (std::size_t i = 0; i < c.values.size(); ++i) {
    if (c.groups[i] == 0) continue;
    lo = std::min(lo, c.median_ratio[i]);
    hi = std::max(hi, c.median_ratio[i]);
  }
  return {lo, hi};
}

GnuplotFigure line_figure(const std::string& figure, const std::vector<const SensitivityCurve*>& curves) {
  GnuplotFigure fig;
  fig.stem = figure_stem("sensitivity_", figure);
  fig.description = "time relative to the first value of " + figure + " against it, one line per backend and op";
  fig.width_px = 560;
  fig.height_px = 400;
  fig.pdf = true;
  std::ostringstream data, plot;
  bool positive = true;
  double lo = INFINITY, hi = 0;
  for (std::size_t k = 0; k < curves.size(); ++k) {
    const SensitivityCurve& c = *curves[k];
    if (k) data << "\n\n";
    data << "# " << c.backend << " " << c.op << ": value median_ratio min_ratio max_ratio groups\n";
    for (std::size_t i = 0; i < c.values.size(); ++i) {
      if (c.groups[i] == 0) continue;
      data << gp_number(c.values[i]) << " " << gp_number(c.median_ratio[i]) << " " << gp_number(c.min_ratio[i]) << " "
           << gp_number(c.max_ratio[i]) << " " << c.groups[i] << "\n";
      positive = positive && c.values[i] > 0;
      lo = std::min(lo, c.values[i]);
      hi = std::max(hi, c.values[i]);
    }
    plot << (k ? ", \\\n     " : "plot ") << "datafile index " << k << " using 1:2:3:4 with yerrorlines lw 1.5 pt 7 ps 0.6 lc rgb \""
         << kSeriesColours[k % (sizeof kSeriesColours / sizeof *kSeriesColours)] << "\" title " << gp_quoted(c.backend + " " + c.op);
  }
  fig.data = data.str();
  std::ostringstream body;
  body << "set title " << gp_quoted("sensitivity to " + figure) << "\n"
       << "set xlabel " << gp_quoted(value_label(*curves.front())) << "\n"
       << "set ylabel " << gp_quoted("time / time at the first value") << "\n"
       << "set offsets graph 0.04, graph 0.04, 0, 0\n"
       << "set grid xtics ytics lc rgb \"#dddddd\" lw 0.5\n"
       << "set key outside bottom center horizontal maxrows 3 samplen 1.5\n";
  // A figure swept over a wide range reads best on a log axis.
  if (positive && hi / lo >= 4) body << "set logscale x 2\nset format x \"%g\"\n";
  body << plot.str() << "\n";
  fig.body = body.str();
  return fig;
}

GnuplotFigure tornado_figure(const std::string& backend, const std::vector<const SensitivityCurve*>& curves) {
  // Widest span first, drawn at the top.
  std::vector<const SensitivityCurve*> sorted = curves;
  std::stable_sort(sorted.begin(), sorted.end(), [](const SensitivityCurve* a, const SensitivityCurve* b) {
    const auto sa = span_of(*a), sb = span_of(*b);
    return sa.second - sa.first > sb.second - sb.first;
  });
  GnuplotFigure fig;
  fig.stem = figure_stem("tornado_", backend);
  fig.description = "each machine figure's span of relative time on " + backend + ", widest first";
  fig.width_px = 900;
  fig.height_px = std::max(260, 90 + 30 * static_cast<int>(sorted.size()));
  fig.pdf = true;
  std::ostringstream data;
  data << "# " << backend << ": position least_ratio most_ratio \"figure, op (first -> last value)\"\n";
  const std::size_t n = sorted.size();
  for (std::size_t k = 0; k < n; ++k) {
    const SensitivityCurve& c = *sorted[k];
    const auto [lo, hi] = span_of(c);
    data << (n - 1 - k) << " " << gp_number(lo) << " " << gp_number(hi) << " \""
         << data_label(c.figure + ", " + c.op + " (" + short_number(c.values.front()) + " -> " + short_number(c.values.back()) +
                             (c.scale ? "x" : "") + ")")
         << "\"\n";
  }
  fig.data = data.str();
  std::ostringstream body;
  body << "set title " << gp_quoted(backend + ": span of time per machine figure") << "\n"
       << "set xlabel " << gp_quoted("time / time at the first value (median over points)") << "\n"
       << "set grid xtics lc rgb \"#dddddd\" lw 0.5\n"
       << "set xtics autofreq\nset format x \"%.2g\"\nset offsets graph 0.05, graph 0.05, 0, 0\n"
       << "set ytics noenhanced\n"  // figure paths hold '_', which enhanced text would read as subscripts
       << "set yrange [-0.7:" << n - 0.3 << "]\n"
       << "set style fill solid 0.6 border -1\n"
       << "set arrow from 1, graph 0 to 1, graph 1 nohead dt 2 lc rgb \"#555555\"\n"
       << "plot datafile using (($2+$3)/2):1:2:3:($1-0.35):($1+0.35):ytic(4) with boxxyerror lc rgb \"" << kSeriesColours[0]
       << "\" notitle\n";
  fig.body = body.str();
  return fig;
}

}  // namespace

std::vector<GnuplotFigure> sensitivity_figures(const std::vector<SensitivityCurve>& curves) {
  std::vector<std::string> figures, backends;
  std::map<std::string, std::vector<const SensitivityCurve*>> by_figure, by_backend;
  for (const auto& c : curves) {
    if (!by_figure.count(c.figure)) figures.push_back(c.figure);
    if (!by_backend.count(c.backend)) backends.push_back(c.backend);
    by_figure[c.figure].push_back(&c);
    by_backend[c.backend].push_back(&c);
  }
  std::vector<GnuplotFigure> out;
  for (const auto& f : figures) out.push_back(line_figure(f, by_figure[f]));
  for (const auto& b : backends) out.push_back(tornado_figure(b, by_backend[b]));
  return out;
}

std::string sensitivity_table(const std::vector<SensitivityCurve>& curves) {
  std::ostringstream t;
  // A workload sweep's op is its workload's name, often longer than an op kind.
  int op_width = 14;
  for (const auto& c : curves) op_width = std::max(op_width, static_cast<int>(c.op.size()) + 2);
  t << std::left << std::setw(34) << "backend" << std::setw(op_width) << "op" << std::setw(34) << "figure" << std::right << std::setw(14)
    << "first" << std::setw(14) << "last" << std::setw(14) << "time ratio" << "  range over points\n";
  for (const auto& c : curves) {
    const std::size_t last = c.values.size() - 1;
    std::ostringstream range;
    range << std::fixed << std::setprecision(3) << c.min_ratio[last] << " - " << c.max_ratio[last] << " (" << c.groups[last] << ")";
    std::ostringstream ratio;
    ratio << std::fixed << std::setprecision(3) << c.median_ratio[last];
    t << std::left << std::setw(34) << c.backend << std::setw(op_width) << c.op << std::setw(34) << c.figure << std::right << std::setw(14)
      << (short_number(c.values.front()) + (c.scale ? "x" : "")) << std::setw(14) << (short_number(c.values.back()) + (c.scale ? "x" : ""))
      << std::setw(14) << ratio.str() << "  " << range.str() << "\n";
  }
  t << "time ratio: the median over the sweep's points of time at the last value / time at the first, the other figures fixed\n";
  return t.str();
}

}  // namespace tilesim::analysis
