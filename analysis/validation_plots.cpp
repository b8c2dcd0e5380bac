#include "analysis/validation_plots.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "fitting/error_metrics.hpp"
#include "fitting/split.hpp"
#include "analysis/plot_text.hpp"

namespace tilesim::analysis {

namespace {

// Colours that stay distinct in greyscale and for colour-blind readers (Okabe-Ito).
const char* const held_out_colour = "#D55E00";     // vermillion, filled: the headline half
const char* const calibration_colour = "#0072B2";  // blue, open

// A double-quoted gnuplot string showing `text` literally under the enhanced-text terminals, where
// '_' and '^' would otherwise make sub- and superscripts ("scatter_add").
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '_' || c == '^' || c == '{' || c == '}' || c == '@' || c == '&' || c == '~') out += "\\\\";
    else if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// gnuplot tics at base-2 exponents, labelled 2^{k} (every other one when there are many), or with
// no labels at all for panels that share their neighbour's axis.
std::string exponent_tics(const std::set<int>& exponents, bool labelled) {
  std::ostringstream s;
  s << "(";
  int i = 0;
  const bool thin = exponents.size() > 6;
  for (int e : exponents) {
    if (i) s << ", ";
    if (!labelled || (thin && i % 2)) s << "\"\" " << e;
    else s << "\"2^{" << e << "}\" " << e;
    ++i;
  }
  s << ")";
  return s.str();
}

// Labelled 2x and 5x tics between the decades of a log axis that spans under three decades, so a
// short axis reads 0.5, 1, 2, 5, 10 instead of two lone powers of ten. Empty for longer axes.
std::string intermediate_log_tics(double lo, double hi) {
  if (hi / lo >= 1000) return "";
  std::ostringstream s;
  bool first = true;
  for (double decade = std::pow(10.0, std::floor(std::log10(lo))); decade <= hi; decade *= 10) {
    for (double m : {2.0, 5.0}) {
      const double v = m * decade;
      if (v < lo || v > hi) continue;
      s << (first ? "(" : ", ") << "\"" << short_number(v) << "\" " << short_number(v);
      first = false;
    }
  }
  return first ? "" : s.str() + ")";
}

}  // namespace

GnuplotFigure scatter_figure(const ScatterSpec& spec, const std::vector<ScatterPoint>& points) {
  GnuplotFigure fig;
  fig.stem = spec.stem;
  fig.description = spec.title;
  fig.width_px = 600;
  fig.height_px = 440;

  double lo = 0, hi = 0;
  bool first = true;
  std::ostringstream data;
  data << "# " << spec.title << "\n"
       << "# columns: measured predicted num_inputs num_features num_outputs\n"
       << "# measured: " << spec.x_label << "; predicted: " << spec.y_label << "\n"
       << "# data sets (gnuplot index, separated by two blank lines): held-out points, then calibration points\n"
       << "# (split rule: fitting/split.hpp); a set with no points is left out\n";
  // The plot clause of each data set written, in index order.
  std::vector<std::string> clauses;
  for (bool calibration : {false, true}) {
    std::ostringstream block;
    for (const auto& p : points) {
      if (p.calibration != calibration) continue;
      block << short_number(p.measured) << ' ' << short_number(p.predicted) << ' ' << p.shape.num_inputs << ' ' << p.shape.num_features
            << ' ' << p.shape.num_outputs << '\n';
      const double a = std::min(p.measured, p.predicted), b = std::max(p.measured, p.predicted);
      lo = first ? a : std::min(lo, a);
      hi = first ? b : std::max(hi, b);
      first = false;
    }
    if (block.str().empty()) continue;
    if (!clauses.empty()) data << "\n\n";
    data << "# " << (calibration ? "calibration" : "held-out") << "\n" << block.str();
    const std::string index = std::to_string(clauses.size());
    clauses.push_back(calibration ? "datafile index " + index + " using 1:2 with points pt 6 ps 0.7 lc rgb \"" +
                                        calibration_colour + "\" title \"calibration\""
                                  : "datafile index " + index + " using 1:2 with points pt 7 ps 0.55 lc rgb \"" +
                                        held_out_colour + "\" title \"held-out\"");
  }
  fig.data = data.str();
  if (first) lo = 0.1, hi = 10;  // no points: still a valid, empty frame
  if (spec.speedup_quadrants) lo = std::min(lo, 0.5), hi = std::max(hi, 2.0);  // 1x is always in view
  // Square log-log frame on half-decade boundaries around the data, so y = x is the diagonal.
  const double lo_axis = std::pow(10.0, std::floor(2 * std::log10(lo)) / 2);
  const double hi_axis = std::pow(10.0, std::ceil(2 * std::log10(hi)) / 2);

  std::ostringstream b;
  b << "set title " << quoted(spec.title);
  if (!spec.note.empty()) b << " . \"\\n{/*0.85 \" . " << quoted(spec.note) << " . \"}\"";
  b << "\n"
    << "set xlabel " << quoted(spec.x_label) << "\n"
    << "set ylabel " << quoted(spec.y_label) << "\n"
    << "set logscale xy\n"
    << "set format xy \"%g\"\n"
    << "set xrange [" << short_number(lo_axis) << ":" << short_number(hi_axis) << "]\n"
    << "set yrange [" << short_number(lo_axis) << ":" << short_number(hi_axis) << "]\n"
    << "set size ratio -1\n";
  const std::string extra_tics = intermediate_log_tics(lo_axis, hi_axis);
  if (!extra_tics.empty()) b << "set xtics add " << extra_tics << "\nset ytics add " << extra_tics << "\n";
  b
    << "set grid xtics ytics lc rgb \"#dddddd\" lw 0.5\n"
    << "set mxtics 10\nset mytics 10\n"
    // The key goes beside the frame: inside, it would hide whichever corner the worst points fall in.
    << "set key outside right center vertical Left reverse samplen 1.2 spacing 1.1\n";
  if (spec.speedup_quadrants) {
    // Shaded: the prediction is on the other side of 1x from the measurement.
    b << "set object 1 rectangle from first 1, graph 0 to graph 1, first 1 behind fc rgb \"#fbe3e3\" fs solid 1.0 noborder\n"
      << "set object 2 rectangle from graph 0, first 1 to first 1, graph 1 behind fc rgb \"#fbe3e3\" fs solid 1.0 noborder\n"
      << "set arrow 1 from first 1, graph 0 to first 1, graph 1 nohead lc rgb \"#777777\" lw 1\n"
      << "set arrow 2 from graph 0, first 1 to graph 1, first 1 nohead lc rgb \"#777777\" lw 1\n";
  }
  b << "plot x with lines lc rgb \"black\" lw 1.5 title \"y = x\", \\\n"
    << "     2*x with lines lc rgb \"#999999\" dt 2 lw 1 title \"2x, 0.5x\", \\\n"
    << "     0.5*x with lines lc rgb \"#999999\" dt 2 lw 1 notitle";
  if (spec.speedup_quadrants)
    b << ", \\\n     NaN with boxes fs solid 1.0 fc rgb \"#fbe3e3\" title \"wrong side of 1x\"";
  // Calibration first so the held-out points, the headline, are drawn on top.
  for (auto it = clauses.rbegin(); it != clauses.rend(); ++it) b << ", \\\n     " << *it;
  b << "\n";
  fig.body = b.str();
  return fig;
}

double error_map_range_pct(const std::vector<ValidationPoint>& points) {
  std::vector<double> abs_errors;
  for (const auto& p : points) abs_errors.push_back(std::abs(p.error_pct()));
  const double p95 = abs_errors.empty() ? 0 : fitting::quantile(abs_errors, 0.95);
  for (double range : {10.0, 20.0, 25.0, 50.0}) {
    if (p95 <= range) return range;
  }
  return 100.0;
}

GnuplotFigure error_map_figure(const std::string& stem, const std::string& title, const std::vector<ValidationPoint>& points) {
  GnuplotFigure fig;
  fig.stem = stem;
  fig.description = title;
  fig.width_px = 840;
  fig.height_px = 560;

  std::set<std::int64_t> features;
  std::set<int> out_exponents, in_exponents;
  for (const auto& p : points) {
    features.insert(p.shape.num_features);
    out_exponents.insert(fitting::size_exponent(p.shape.num_outputs));
    in_exponents.insert(fitting::size_exponent(p.shape.num_inputs));
  }
  const double range = error_map_range_pct(points);
  double max_abs_error_pct = 0;
  for (const auto& p : points) max_abs_error_pct = std::max(max_abs_error_pct, std::abs(p.error_pct()));
  std::string legend = "blue: model too fast, red: model too slow; dots: calibration points";
  if (max_abs_error_pct > range) legend += "; colours saturate beyond \u00b1" + short_number(range) + "%";

  std::ostringstream data;
  data << "# " << title << "\n"
       << "# One block (gnuplot index) per num_features value, in increasing order: ";
  for (auto f : features) data << f << ' ';
  data << "\n# columns: log2(num_outputs) log2(num_inputs) error_pct calibration(1/0) num_outputs num_inputs "
          "num_features\n"
       << "# error_pct = 100 * (predicted - measured) / measured\n";
  bool first_block = true;
  for (auto f : features) {
    // Two blank lines separate gnuplot data sets: the k-th feature size is index k - 1.
    if (!first_block) data << "\n\n";
    first_block = false;
    data << "# num_features = " << f << "\n";
    for (const auto& p : points) {
      if (p.shape.num_features != f) continue;
      data << fitting::size_exponent(p.shape.num_outputs) << ' ' << fitting::size_exponent(p.shape.num_inputs) << ' ' << short_number(p.error_pct())
           << ' ' << (p.calibration ? 1 : 0) << ' ' << p.shape.num_outputs << ' ' << p.shape.num_inputs << ' ' << f << '\n';
    }
  }
  fig.data = data.str();

  // Panel grid: up to three columns, in screen coordinates, leaving room for the title and the colour
  // box on the right.
  const int panels = static_cast<int>(features.size());
  const int cols = std::min(3, std::max(1, panels));
  const int rows = (panels + cols - 1) / cols;
  const double left = 0.08, right = 0.82, top = 0.86, bottom = 0.10, hgap = 0.025, vgap = 0.07;
  const double panel_w = (right - left - hgap * (cols - 1)) / cols;
  const double panel_h = (top - bottom - vgap * (rows - 1)) / std::max(rows, 1);
  const int out_lo = out_exponents.empty() ? 0 : *out_exponents.begin();
  const int out_hi = out_exponents.empty() ? 1 : *out_exponents.rbegin();
  const int in_lo = in_exponents.empty() ? 0 : *in_exponents.begin();
  const int in_hi = in_exponents.empty() ? 1 : *in_exponents.rbegin();

  std::ostringstream b;
  b << "# Diverging palette centred on 0 (ColorBrewer RdBu): blue = model too fast, red = model too slow.\n"
    << "set palette defined (-1 \"#2166ac\", -0.66 \"#67a9cf\", -0.33 \"#d1e5f0\", 0 \"#f7f7f7\", 0.33 \"#fddbc7\", "
       "0.66 \"#ef8a62\", 1 \"#b2182b\")\n"
    << "error_range = " << short_number(range) << "  # percent; larger errors saturate the colour\n"
    << "set cbrange [-error_range:error_range]\n"
    // Explicit tic labels are gnuplot format strings, hence "%%" for a literal percent sign.
    << "set cbtics (\"-\".gprintf(\"%g\", error_range).\"%%\" -error_range, \"-\".gprintf(\"%g\", error_range/2).\"%%\" "
       "-error_range/2, \"0\" 0, \"+\".gprintf(\"%g\", error_range/2).\"%%\" error_range/2, \"+\".gprintf(\"%g\", "
       "error_range).\"%%\" error_range)\n"
    << "set multiplot title " << quoted(title) << " . \"\\n{/*0.85 \" . " << quoted(legend) << " . \"}\"\n"
    << "set xrange [" << out_lo - 0.5 << ":" << out_hi + 0.5 << "]\n"
    << "set yrange [" << in_lo - 0.5 << ":" << in_hi + 0.5 << "]\n"
    << "set style fill solid 1.0 noborder\n"
    << "unset key\n";
  int i = 0;
  for (auto f : features) {
    const int row = i / cols, col = i % cols;
    const double x0 = left + col * (panel_w + hgap);
    const double y1 = top - row * (panel_h + vgap);
    b << "\n# panel " << i + 1 << ": num_features = " << f << "\n"
      << "set lmargin at screen " << short_number(x0) << "; set rmargin at screen " << short_number(x0 + panel_w) << "\n"
      << "set tmargin at screen " << short_number(y1) << "; set bmargin at screen " << short_number(y1 - panel_h) << "\n"
      << "set title \"num\\\\_features = " << f << "\" offset 0,-0.6\n"
      << (row == rows - 1 ? "set xlabel \"num\\\\_outputs\" offset 0,0.3\n" : "unset xlabel\n")
      << "set xtics " << exponent_tics(out_exponents, row == rows - 1) << " out nomirror scale 0.5\n"
      << (col == 0 ? "set ylabel \"num\\\\_inputs\" offset 1,0\n" : "unset ylabel\n")
      << "set ytics " << exponent_tics(in_exponents, col == 0) << " out nomirror scale 0.5\n";
    if (i == panels - 1)
      b << "set colorbox user origin screen " << short_number(right + 0.03) << ", screen " << short_number(bottom) << " size screen 0.022, screen "
        << short_number(top - bottom) << "\n"
        << "set cblabel \"error = (predicted - measured) / measured\" offset 1,0\n";
    else
      b << "unset colorbox\n";
    b << "plot datafile index " << i
      << " using 1:2:($1-0.5):($1+0.5):($2-0.5):($2+0.5):3 with boxxyerror lc palette, \\\n"
      << "     datafile index " << i << " using 1:($4 == 1 ? $2 : NaN) with points pt 7 ps 0.25 lc rgb \"#404040\"\n";
    ++i;
  }
  b << "unset multiplot\n";
  fig.body = b.str();
  return fig;
}

}  // namespace tilesim::analysis
