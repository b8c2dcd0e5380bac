#include "analysis/contour_figure.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "analysis/plot_text.hpp"

namespace tilesim::analysis {

namespace {

// A figure swept over 4x or more reads best on a log axis (a sweep's settings are usually geometric).
bool contour_wide(const std::vector<double>& values) {
  return values.front() > 0 && values.back() / values.front() >= 4;
}

// Where a value lies along its axis: log2 on a log axis, so that iso-lines and cell edges fall where the
// reader sees them between the drawn settings.
double contour_coord(double value, bool log_axis) { return log_axis ? std::log2(value) : value; }
double contour_value(double coord, bool log_axis) { return log_axis ? std::exp2(coord) : coord; }

// Cell edges: midpoints between neighbouring settings along the axis, mirrored at the ends.
std::vector<double> contour_edges(const std::vector<double>& values, bool log_axis) {
  std::vector<double> c;
  for (double v : values) c.push_back(contour_coord(v, log_axis));
  std::vector<double> e = {c[0] - (c[1] - c[0]) / 2};
  for (std::size_t i = 0; i + 1 < c.size(); ++i) e.push_back((c[i] + c[i + 1]) / 2);
  e.push_back(c.back() + (c.back() - c[c.size() - 2]) / 2);
  for (double& v : e) v = contour_value(v, log_axis);
  return e;
}

struct ContourSegment {
  double x0, y0, x1, y1;
};

// The iso-line at `level` through the grid of cell values, square by square (marching squares, linear
// along each edge in axis coordinates). A square with a hole at a corner draws nothing: gnuplot's own
// contouring needs a complete grid, and a sweep's cells that do not fit leave holes.
std::vector<ContourSegment> contour_segments(const ContourMap& m, double level, bool log_x, bool log_y) {
  std::vector<ContourSegment> out;
  for (std::size_t j = 0; j + 1 < m.y_values.size(); ++j)
    for (std::size_t i = 0; i + 1 < m.x_values.size(); ++i) {
      // Corners counter-clockwise from the lower left; edge k joins corner k and corner k+1.
      const std::size_t ci[4] = {i, i + 1, i + 1, i}, cj[4] = {j, j, j + 1, j + 1};
      double v[4], cx[4], cy[4];
      bool complete = true;
      for (int k = 0; k < 4; ++k) {
        const auto& t = m.relative_time[cj[k]][ci[k]];
        complete = complete && t.has_value();
        v[k] = t.value_or(0);
        cx[k] = contour_coord(m.x_values[ci[k]], log_x);
        cy[k] = contour_coord(m.y_values[cj[k]], log_y);
      }
      if (!complete) continue;
      std::vector<std::pair<double, double>> crossings;
      for (int k = 0; k < 4; ++k) {
        const int n = (k + 1) % 4;
        if ((v[k] >= level) == (v[n] >= level)) continue;
        const double f = (level - v[k]) / (v[n] - v[k]);
        crossings.push_back({contour_value(cx[k] + f * (cx[n] - cx[k]), log_x), contour_value(cy[k] + f * (cy[n] - cy[k]), log_y)});
      }
      for (std::size_t k = 0; k + 1 < crossings.size(); k += 2)
        out.push_back({crossings[k].first, crossings[k].second, crossings[k + 1].first, crossings[k + 1].second});
    }
  return out;
}

// Tics at the settings the sweep has, when few: gnuplot's own would label none of them.
std::string contour_tics(const char* axis, const std::vector<double>& values) {
  if (values.size() > 8) return std::string("set format ") + axis + " \"%g\"\n";
  std::string tics = std::string("set ") + axis + "tics (";
  for (std::size_t i = 0; i < values.size(); ++i) tics += (i ? ", \"" : "\"") + short_number(values[i]) + "\" " + gp_number(values[i]);
  return tics + ")\n";
}

std::string contour_held_text(const ContourMap& m) {
  if (m.held.empty()) return "no other figure varies";
  std::string text = "held: ";
  for (std::size_t i = 0; i < m.held.size(); ++i) text += (i ? ", " : "") + m.held[i];
  return text;
}

std::string contour_data(const ContourMap& m, const std::vector<std::vector<ContourSegment>>& lines, bool log_x, bool log_y) {
  const auto xe = contour_edges(m.x_values, log_x), ye = contour_edges(m.y_values, log_y);
  std::ostringstream d;
  d << "# " << m.backend << " " << m.op << ": time / time at the reference cell (" << m.x_figure << " " << short_number(m.x_values[m.x_reference])
    << ", " << m.y_figure << " " << short_number(m.y_values[m.y_reference]) << "), median over the points both ran; " << contour_held_text(m)
    << "\n# the grid, one scan line per y value: x y x_low x_high y_low y_high relative_time (NaN: a hole) points\n";
  for (std::size_t j = 0; j < m.y_values.size(); ++j) {
    for (std::size_t i = 0; i < m.x_values.size(); ++i) {
      const auto& t = m.relative_time[j][i];
      d << gp_number(m.x_values[i]) << " " << gp_number(m.y_values[j]) << " " << gp_number(xe[i]) << " " << gp_number(xe[i + 1]) << " "
        << gp_number(ye[j]) << " " << gp_number(ye[j + 1]) << " " << (t ? gp_number(*t) : "NaN") << " " << m.shared_points[j][i] << "\n";
    }
    d << "\n";  // gnuplot's grid format: a blank line ends each scan line
  }
  for (std::size_t l = 0; l < lines.size(); ++l) {
    d << "\n\n# the iso-line at " << short_number(kContourLevels[l]) << "x: segments of two points (x y), one blank line apart\n";
    // An empty set still holds one undefined point: gnuplot does not count a set without lines, and
    // the index of every later one would shift.
    if (lines[l].empty()) d << "NaN NaN\n";
    for (const auto& s : lines[l]) d << gp_number(s.x0) << " " << gp_number(s.y0) << "\n" << gp_number(s.x1) << " " << gp_number(s.y1) << "\n\n";
  }
  return d.str();
}

namespace {

// "chip.sram_bytes_per_tile" -> "sram_bytes_per_tile": a figure's own name, for file names.
std::string last_path_key(const std::string& path) {
  const std::size_t dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

}  // namespace

GnuplotFigure contour_figure(const ContourMap& m) {
  const bool log_x = contour_wide(m.x_values), log_y = contour_wide(m.y_values);
  std::vector<std::vector<ContourSegment>> lines;
  for (double level : kContourLevels) lines.push_back(contour_segments(m, level, log_x, log_y));
  GnuplotFigure fig;
  // The two figures in the name: maps of one results.csv over other pairs of figures go beside it.
  fig.stem = figure_stem("contour_", m.backend + "_" + m.op + "_" + last_path_key(m.x_figure) + "_x_" + last_path_key(m.y_figure));
  fig.description = "time relative to the reference cell over " + m.x_figure + " and " + m.y_figure + " on " + m.backend + " " + m.op +
                    ", with iso-lines";
  fig.width_px = 600;
  fig.height_px = 460;
  fig.pdf = true;
  fig.data = contour_data(m, lines, log_x, log_y);

  // A colour scale symmetric about 1 on a log axis: twice as slow and twice as fast are equally far.
  double span = 1.25;
  for (const auto& row : m.relative_time)
    for (const auto& t : row)
      if (t && *t > 0) span = std::max(span, std::max(*t, 1 / *t));
  const auto xe = contour_edges(m.x_values, log_x), ye = contour_edges(m.y_values, log_y);
  std::ostringstream b;
  b << "set title " << gp_quoted(m.backend + " " + m.op + ": " + m.kind + " time / time at the reference cell\n" + contour_held_text(m)) << "\n"
    << "set xlabel " << gp_quoted(contour_axis_label(m.x_figure, m.x_scale)) << "\n"
    // Two lines: a figure path and "(factor on the base machine's)" in one would not fit the height.
    << "set ylabel " << gp_quoted(m.y_scale ? m.y_figure + "\n(factor on the base machine's)" : m.y_figure) << "\n"
    << "set cblabel " << gp_quoted("time / time at the reference") << "\n"
    << (log_x ? "set logscale x 2\n" : "") << (log_y ? "set logscale y 2\n" : "") << "set logscale cb 2\n"
    << "set xrange [" << gp_number(xe.front()) << ":" << gp_number(xe.back()) << "]\n"
    << "set yrange [" << gp_number(ye.front()) << ":" << gp_number(ye.back()) << "]\n"
    << "set cbrange [" << gp_number(1 / span) << ":" << gp_number(span) << "]\n"
    // The iso-line levels and powers of two as colour-box tics: a log2 box would label only 1 in a narrow span.
    << "set cbtics (\"1/8\" 0.125, \"1/4\" 0.25, \"0.5\" 0.5, \"0.75\" 0.75, \"1\" 1, \"1.5\" 1.5, \"2\" 2, \"4\" 4, \"8\" 8)\nset mcbtics 1\n"
    << contour_tics("x", m.x_values) << contour_tics("y", m.y_values)
    // Blue where faster than the reference, red where slower; holes show the grey behind the cells.
    << "set palette defined (0 \"#2166ac\", 0.25 \"#67a9cf\", 0.5 \"#f7f7f7\", 0.75 \"#ef8a62\", 1 \"#b2182b\")\n"
    << "set object 1 rectangle from graph 0, graph 0 to graph 1, graph 1 behind fillcolor rgb \"#cccccc\" fillstyle solid noborder\n"
    << "set style fill solid 1.0 noborder\n"
    << "set key outside bottom center horizontal samplen 2\n"
    << "plot datafile index 0 using 1:2:3:4:5:6:7 with boxxyerror fillcolor palette notitle, \\\n"
    << "     datafile index 0 using 1:($7 == $7 ? $2 : NaN):(sprintf(\"%.2f\", $7)) with labels font \",9\" notitle";
  const char* dashes[] = {"3", "2", "1", "2", "3"};
  for (std::size_t l = 0; l < lines.size(); ++l)
    if (!lines[l].empty())
      b << ", \\\n     datafile index " << l + 1 << " using 1:2 with lines lw " << (kContourLevels[l] == 1.0 ? "2.5" : "1.5")
        << " dt " << dashes[l] << " lc rgb \"black\" title \"" << short_number(kContourLevels[l]) << "x\"";
  b << "\n";
  fig.body = b.str();
  return fig;
}

}  // namespace

std::vector<GnuplotFigure> contour_figures(const std::vector<ContourMap>& maps) {
  std::vector<GnuplotFigure> out;
  for (const auto& m : maps) out.push_back(contour_figure(m));
  return out;
}

std::string contour_table(const std::vector<ContourMap>& maps) {
  std::ostringstream t;
  for (const auto& m : maps) {
    t << m.backend << " " << m.op << ": " << m.kind << " time / time at " << m.x_figure << " " << short_number(m.x_values[m.x_reference])
      << ", " << m.y_figure << " " << short_number(m.y_values[m.y_reference]) << " (median over " << m.points << " points); "
      << contour_held_text(m) << "\n";
    t << "  rows: " << contour_axis_label(m.y_figure, m.y_scale) << "; columns: " << contour_axis_label(m.x_figure, m.x_scale) << "\n";
    t << "  " << std::setw(12) << "y \\ x";
    for (double x : m.x_values) t << std::setw(12) << short_number(x);
    t << "\n";
    std::string holes;
    for (std::size_t j = 0; j < m.y_values.size(); ++j) {
      t << "  " << std::setw(12) << short_number(m.y_values[j]);
      for (std::size_t i = 0; i < m.x_values.size(); ++i) {
        std::ostringstream cell;
        if (m.relative_time[j][i]) cell << std::fixed << std::setprecision(3) << *m.relative_time[j][i];
        else {
          cell << "-";
          holes += " (" + short_number(m.x_values[i]) + ", " + short_number(m.y_values[j]) + ")";
        }
        t << std::setw(12) << cell.str();
      }
      t << "\n";
    }
    if (!holes.empty()) t << "  holes, no point shared with the reference cell (x, y):" << holes << "\n";
  }
  t << "each cell: the median over the grid points it shares with the reference cell of time / the reference's time; "
       "iso-lines at 0.5x, 0.75x, 1x, 1.5x, 2x\n";
  return t.str();
}

}  // namespace tilesim::analysis
