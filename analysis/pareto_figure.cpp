#include "analysis/pareto_figure.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "analysis/plot_text.hpp"

namespace tilesim::analysis {

namespace {

// A backend name as the last, double-quoted field of a data line: its own quotes left out.
std::string pareto_data_label(const std::string& text) {
  std::string out;
  for (char c : text)
    if (c != '"') out += c;
  return out;
}

std::string pareto_data_line(const ParetoVariant& v) {
  return gp_number(v.cost) + " " + gp_number(v.time_s) + " \"" + pareto_data_label(v.backend) + "\"\n";
}

// A quantity that spans a factor of `at_least` or more reads best on a log axis.
bool pareto_wide(const std::vector<ParetoVariant>& variants, double (*of)(const ParetoVariant&), double at_least) {
  double lo = INFINITY, hi = 0;
  for (const auto& v : variants) {
    if (!(of(v) > 0)) return false;
    lo = std::min(lo, of(v));
    hi = std::max(hi, of(v));
  }
  return hi / lo >= at_least;
}

// The unit the total times read best in (the data stay in seconds): its name and seconds per unit.
std::pair<std::string, double> pareto_time_unit(const std::vector<ParetoVariant>& variants) {
  double most_s = 0;
  for (const auto& v : variants) most_s = std::max(most_s, v.time_s);
  if (most_s >= 1) return {"s", 1};
  if (most_s >= 1e-3) return {"ms", 1e-3};
  if (most_s >= 1e-6) return {"\xC2\xB5" "s", 1e-6};  // UTF-8 micro sign
  return {"ns", 1e-9};
}

// 320k, 1.28M: a cost as a tick label, three significant digits and an SI prefix.
std::string pareto_si_text(double value) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int p = 0;
  while (std::fabs(value) >= 1000 && p < 6) {
    value /= 1000;
    ++p;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%s", value, prefixes[p]);
  return buf;
}

// Ticks at the costs the machines have, when few: a sweep's costs are a handful of figure values, and
// gnuplot's own ticks (powers of two on a log axis) would label none of them.
std::string pareto_cost_ticks(const std::vector<ParetoVariant>& variants) {
  std::vector<double> costs;
  for (const auto& v : variants)
    if (std::find(costs.begin(), costs.end(), v.cost) == costs.end()) costs.push_back(v.cost);
  if (costs.size() > 8) return "set format x \"%.3g\"\n";
  std::sort(costs.begin(), costs.end());
  std::string ticks = "set xtics (";
  for (std::size_t i = 0; i < costs.size(); ++i)
    ticks += (i ? ", \"" : "\"") + pareto_si_text(costs[i]) + "\" " + gp_number(costs[i]);
  return ticks + ")\n";
}

GnuplotFigure pareto_figure(const ParetoGroup& g) {
  GnuplotFigure fig;
  fig.stem = figure_stem("pareto_", g.backend + "_" + g.op);
  fig.description = "total time over the grid's points against " + g.cost + " on " + g.backend + " " + g.op +
                    ", every machine that runs them all, and the Pareto front";
  fig.width_px = 560;
  fig.height_px = 420;
  fig.pdf = true;
  const std::string points = std::to_string(g.points) + (g.points == 1 ? " point" : " points");
  std::ostringstream data;
  data << "# " << g.backend << " " << g.op << ", every machine that runs all " << points << ": cost total_time_s \"backend\"\n";
  for (const auto& v : g.feasible) data << pareto_data_line(v);
  data << "\n\n# the front, each faster than every machine of equal or lower cost: cost total_time_s \"backend\"\n";
  for (const ParetoVariant* v : g.front()) data << pareto_data_line(*v);
  if (g.base_index >= 0)
    data << "\n\n# the base machine's figures: cost total_time_s \"backend\"\n" << pareto_data_line(g.feasible[g.base_index]);
  fig.data = data.str();

  const auto [unit, unit_s] = pareto_time_unit(g.feasible);
  const std::string y = "($2/" + gp_number(unit_s) + ")";
  std::ostringstream body;
  body << "set title " << gp_quoted(g.backend + " " + g.op + ": Pareto front\n" + g.kind + " time summed over the grid's " + points) << "\n"
       << "set xlabel " << gp_quoted("cost: " + g.cost) << "\n"
       << "set ylabel " << gp_quoted("total time over " + points + " (" + unit + ")") << "\n"
       << "set format y \"%.3g\"\n"
       << pareto_cost_ticks(g.feasible)
       << "set autoscale fix\nset offsets graph 0.08, graph 0.08, graph 0.08, graph 0.08\n"  // the data's own range, padded
       << "set grid xtics ytics lc rgb \"#dddddd\" lw 0.5\n"
       << "set key outside bottom center horizontal samplen 1.5\n";
  if (pareto_wide(g.feasible, [](const ParetoVariant& v) { return v.cost; }, 4)) body << "set logscale x 2\n";
  if (pareto_wide(g.feasible, [](const ParetoVariant& v) { return v.time_s; }, 10)) body << "set logscale y 10\n";
  body << "plot datafile index 0 using 1:" << y << " with points pt 7 ps 0.6 lc rgb \"#999999\" title \"every machine\", \\\n"
       << "     datafile index 1 using 1:" << y << " with linespoints lw 1.5 pt 7 ps 0.8 lc rgb \"" << kSeriesColours[0]
       << "\" title \"Pareto front\"";
  if (g.base_index >= 0)
    body << ", \\\n     datafile index 2 using 1:" << y << " with points pt 6 ps 1.8 lw 1.5 lc rgb \"" << kSeriesColours[1]
         << "\" title \"base machine\"";
  body << "\n";
  fig.body = body.str();
  return fig;
}

std::string pareto_seconds(double s) {
  std::ostringstream t;
  t << std::scientific << std::setprecision(4) << s;
  return t.str();
}

}  // namespace

std::vector<GnuplotFigure> pareto_figures(const std::vector<ParetoGroup>& groups) {
  std::vector<GnuplotFigure> out;
  for (const auto& g : groups)
    if (!g.feasible.empty()) out.push_back(pareto_figure(g));
  return out;
}

std::string pareto_table(const std::vector<ParetoGroup>& groups) {
  std::ostringstream t;
  for (const auto& g : groups) {
    std::size_t width = 40;
    for (const auto& v : g.feasible) width = std::max(width, v.backend.size() + 2);
    const auto front = g.front();
    t << g.backend << " " << g.op << ": cost " << g.cost << ", " << g.kind << " time summed over " << g.points << " points; "
      << g.feasible.size() << " machines run them all, " << front.size() << " on the front, " << g.infeasible.size()
      << " left out\n";
    t << "  " << std::left << std::setw(static_cast<int>(width)) << "backend" << std::right << std::setw(16) << "cost"
      << std::setw(16) << "total time (s)" << std::setw(12) << "speedup" << "\n";
    const ParetoVariant* base = g.base_index >= 0 ? &g.feasible[g.base_index] : nullptr;
    for (const ParetoVariant* v : front) {
      std::ostringstream speedup;
      if (base && v->time_s > 0) speedup << std::fixed << std::setprecision(3) << base->time_s / v->time_s << "x";
      else speedup << "-";
      t << "  " << std::left << std::setw(static_cast<int>(width)) << v->backend << std::right << std::setw(16)
        << short_number(v->cost) << std::setw(16) << pareto_seconds(v->time_s) << std::setw(12) << speedup.str() << "\n";
    }
    if (base) t << "  speedup: the time of " << base->backend << " (the base machine's figures) / the machine's\n";
    else t << "  speedup: - (the base machine is not among the machines that run every point)\n";
    for (const auto& v : g.infeasible)
      t << "  left out, misses " << v.missing_points << " of " << g.points << " points: " << v.backend << " (cost "
        << short_number(v.cost) << ")\n";
  }
  t << "front: the machines no machine of equal or lower cost is as fast as; time: the rows' time_s summed over each "
       "backend and op's points\n";
  return t.str();
}

}  // namespace tilesim::analysis
