#include "analysis/surface_figures.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "analysis/plot_text.hpp"

namespace tilesim::analysis {

namespace {

// Diverging and colour-blind safe (ColorBrewer RdBu): red where the baseline is faster, white at 1x,
// blue where the target is faster. The palette runs over log10(speedup) in [-L, L].
const char* const palette =
    "set palette defined (0 \"#b2182b\", 0.25 \"#ef8a62\", 0.5 \"#f7f7f7\", 0.75 \"#67a9cf\", 1 \"#2166ac\")\n";

struct Layout {
  int columns = 1, rows = 1;
  int width_px = 0, height_px = 0;
};

Layout layout_for(std::size_t panels, int panel_w, int panel_h, int left, int right, int top, int bottom, int gap_x,
                  int gap_y) {
  Layout l;
  const int n = static_cast<int>(std::max<std::size_t>(panels, 1));
  l.columns = n <= 3 ? n : (n == 4 ? 2 : 3);
  l.rows = (n + l.columns - 1) / l.columns;
  l.width_px = left + l.columns * panel_w + (l.columns - 1) * gap_x + right;
  l.height_px = top + l.rows * panel_h + (l.rows - 1) * gap_y + bottom;
  return l;
}

double log10_range(double range) { return std::log10(range); }

// "10", "1/10", "2", "1/2": a speedup tic label.
std::string tic_label(double v) {
  char buf[32];
  if (v >= 1) std::snprintf(buf, sizeof buf, "%g×", v);
  else std::snprintf(buf, sizeof buf, "1/%g×", 1 / v);
  return buf;
}

// Colour-box and z tics at each power of ten inside [-L, L], or at powers of two for small ranges.
std::string speedup_tics(double range) {
  const double L = log10_range(range);
  std::vector<double> values;
  if (range <= 4) {
    for (double v : {1.0 / 4, 1.0 / 2, 1.0, 2.0, 4.0})
      if (v >= 1 / range - 1e-9 && v <= range + 1e-9) values.push_back(v);
  } else {
    const int top = static_cast<int>(std::floor(L + 1e-9));
    for (int e = -top; e <= top; ++e) values.push_back(std::pow(10.0, e));
  }
  std::ostringstream s;
  s << "(";
  for (std::size_t i = 0; i < values.size(); ++i)
    s << (i ? ", " : "") << "\"" << tic_label(values[i]) << "\" " << gp_number(std::log10(values[i]));
  s << ")";
  return s.str();
}

// A grid value in a data file or tic: a whole number as its digits (the sizes: 32768, not 3.2768e+04),
// anything else at full precision.
std::string axis_number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v == 0 ? 0.0 : v);
    return buf;
  }
  return gp_number(v);
}

// Tics at the grid's values, labelled 16 / 1k / 32k (0.5 for a value that is not whole); when there
// are more than six, only every `every`-th is labelled (the others are minor tics).
std::string size_tics(const std::vector<double>& values, bool labelled, std::size_t every = 2) {
  std::ostringstream s;
  s << "(";
  const bool thin = values.size() > 6;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    s << (i ? ", " : "");
    if (!labelled || (thin && i % every)) s << "\"\" " << axis_number(v) << " 1";
    else
      s << "\"" << (v == std::floor(v) && std::fabs(v) < 9e18 ? size_label(static_cast<std::int64_t>(v)) : short_number(v)) << "\" "
        << axis_number(v);
  }
  s << ")";
  return s.str();
}

// Cell edges: geometric midpoints between neighbours on a log axis (the grid is log-spaced there),
// arithmetic ones on a linear axis, mirrored at the ends.
std::vector<double> edges(const std::vector<double>& v, bool log_axis) {
  std::vector<double> e;
  if (v.empty()) return e;
  if (log_axis) {
    if (v.size() == 1) return {v[0] / std::sqrt(2.0), v[0] * std::sqrt(2.0)};
    e.push_back(v[0] / std::sqrt(v[1] / v[0]));
    for (std::size_t i = 0; i + 1 < v.size(); ++i) e.push_back(std::sqrt(v[i] * v[i + 1]));
    e.push_back(v.back() * std::sqrt(v.back() / v[v.size() - 2]));
    return e;
  }
  // One value: a cell a quarter of its size either side (half a unit either side of 0).
  if (v.size() == 1) return {v[0] - (v[0] != 0 ? std::fabs(v[0]) / 4 : 0.5), v[0] + (v[0] != 0 ? std::fabs(v[0]) / 4 : 0.5)};
  e.push_back(v[0] - (v[1] - v[0]) / 2);
  for (std::size_t i = 0; i + 1 < v.size(); ++i) e.push_back((v[i] + v[i + 1]) / 2);
  e.push_back(v.back() + (v.back() - v[v.size() - 2]) / 2);
  return e;
}

// A 3D axis's range: its values' ends; a single value's cell edges, since gnuplot refuses an empty range.
std::string surface_range(const std::vector<double>& values, bool log_axis) {
  if (values.front() != values.back()) return "[" + axis_number(values.front()) + ":" + axis_number(values.back()) + "]";
  const auto e = edges(values, log_axis);
  return "[" + gp_number(e.front()) + ":" + gp_number(e.back()) + "]";
}

// "set logscale xy 2" for the default axes; an axis the grid draws linear is left out.
std::string log_scales(const SpeedupGrid& g) {
  const std::string axes = std::string(g.x_log ? "x" : "") + (g.y_log ? "y" : "");
  return axes.empty() ? std::string() : "set logscale " + axes + " 2\n";
}

// The heat map's axis title: the row counts say what they count, as they always did.
std::string heatmap_axis_title(const std::string& title) {
  return title == "num_inputs" || title == "num_outputs" ? title + " (rows)" : title;
}

// The 1x contour as one data set: segments one blank line apart, then the two blank lines that end
// the set. An empty set still holds one undefined point, because gnuplot does not count a data set
// without lines and would shift the index of every later one.
void write_contour(std::ostream& data, const std::vector<Segment>& segments, bool at_zero) {
  const std::string z = at_zero ? " 0" : "";
  if (segments.empty()) data << "NaN NaN" << (at_zero ? " NaN" : "") << "\n";
  for (const auto& seg : segments)
    data << gp_number(seg.x0) << " " << gp_number(seg.y0) << z << "\n"
         << gp_number(seg.x1) << " " << gp_number(seg.y1) << z << "\n\n";
  data << "\n\n";
}

// Width of a line of text in pixels (1 px = 1 pt) at a font size: 0.72 em per character at most
// in Helvetica's stand-in DejaVu Sans, which is what cairo draws with on Debian.
int text_width_px(const std::string& text, double font_pt) {
  std::size_t longest = 0, current = 0;
  for (char c : text) {
    if (c == '\n') {
      longest = std::max(longest, current);
      current = 0;
    } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {  // count UTF-8 characters, not bytes
      ++current;
    }
  }
  longest = std::max(longest, current);
  return static_cast<int>(std::ceil(0.72 * font_pt * static_cast<double>(longest)));
}

// A panel wide enough for its title (9 pt) and a figure wide enough for its title (10 pt).
int fitted_panel_width(const SurfaceFigureSpec& spec, int panel_w, int columns, int margins_and_gaps) {
  for (const auto& p : spec.panels) panel_w = std::max(panel_w, text_width_px(p.title, 9) + 8);
  const int title_w = std::max(text_width_px(spec.title, 10), text_width_px(spec.subtitle, 8)) + 12;
  const int needed = (title_w - margins_and_gaps + columns - 1) / columns;
  return std::max(panel_w, needed);
}

int line_count(const std::string& text) { return 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

// Space above the panels: the title lines (10 pt), the subtitle (8 pt) and the first panel's title.
int top_margin(const SurfaceFigureSpec& spec) { return 10 + 15 * line_count(spec.title) + (spec.subtitle.empty() ? 0 : 12 * line_count(spec.subtitle)) + 16; }

// The figure title and subtitle as screen labels, so both place exactly whatever the panel layout.
std::string title_labels(const SurfaceFigureSpec& spec, const Layout& l) {
  std::ostringstream s;
  const double H = l.height_px;
  double y = 1 - 9.0 / H;
  s << "set label 98 " << gp_quoted(spec.title) << " at screen 0.5, screen " << gp_number(y) << " center front font \",10\"\n";
  y -= (15.0 * line_count(spec.title) + 1) / H;
  if (!spec.subtitle.empty())
    s << "set label 99 " << gp_quoted(spec.subtitle) << " at screen 0.5, screen " << gp_number(y) << " center front font \",8\"\n";
  return s.str();
}

std::string colour_scale(const SurfaceFigureSpec& spec, const Layout& l, int right, int top, int bottom) {
  const double L = log10_range(spec.range);
  std::ostringstream s;
  s << palette << "set cbrange [" << gp_number(-L) << ":" << gp_number(L) << "]\n"
    << "set cbtics " << speedup_tics(spec.range) << " scale 0.5\n"
    << "set colorbox vertical user origin screen " << gp_number(1 - (right - 12.0) / l.width_px) << ", "
    << gp_number(bottom / static_cast<double>(l.height_px)) << " size screen " << gp_number(10.0 / l.width_px) << ", "
    << gp_number(1 - (top + bottom) / static_cast<double>(l.height_px)) << "\n"
    << "set cblabel \"speedup\" offset -0.2,0\n";
  return s.str();
}

}  // namespace

double surface_colour_range(const std::vector<SurfacePanel>& panels) {
  double most = 1;
  for (const auto& p : panels)
    for (const auto& column : p.grid.speedup)
      for (const auto& s : column)
        if (s && *s > 0) most = std::max({most, *s, 1 / *s});
  for (double r : {2.0, 4.0, 10.0, 30.0, 100.0, 1000.0})
    if (most <= r * (1 + 1e-9)) return r;
  return 10000;
}

namespace {

// The figure's frame: its stem, a one-line description (title, subtitle, `kind`) and the layout's size.
GnuplotFigure figure_for(const SurfaceFigureSpec& spec, const Layout& l, const std::string& kind) {
  GnuplotFigure fig;
  fig.stem = spec.stem;
  fig.description = spec.title + (spec.subtitle.empty() ? "" : " (" + spec.subtitle + ")") + kind;
  for (auto& c : fig.description)
    if (c == '\n') c = ' ';
  fig.width_px = l.width_px;
  fig.height_px = l.height_px;
  fig.font_pt = 9;
  fig.pdf = true;
  return fig;
}

}  // namespace

GnuplotFigure speedup_heatmap_figure(const SurfaceFigureSpec& spec) {
  const bool single = spec.panels.size() == 1;
  // Sized for a paper at 9 pt: one panel reads at a column's width (about 250 pt), several panels
  // span the text width (about 500 pt).
  int title_lines = 1;
  for (const auto& p : spec.panels) title_lines = std::max(title_lines, line_count(p.title));
  // The right margin holds the colour box, its tic labels ("1/10×") and the rotated "speedup" label:
  // cairo's fonts (PNG, PDF) set the tic labels wider than the SVG's metrics, which pushed the label
  // off a one-panel PNG at 66 px.
  const int left = 56, right = 80, top = top_margin(spec) + 11 * (title_lines - 1), bottom = 36, gap_x = 10,
            gap_y = 11 + 11 * title_lines;
  const int columns = layout_for(spec.panels.size(), 1, 1, 0, 0, 0, 0, 0, 0).columns;
  // Wide and tall enough for the axis titles too: a column such as a machine figure's path is longer
  // than the sizes' names, which always fitted.
  const int panel_w = std::max(fitted_panel_width(spec, single ? 200 : 140, columns, left + right + (columns - 1) * gap_x),
                               text_width_px(heatmap_axis_title(spec.x_title), 9) + 8);
  const int rows = static_cast<int>((std::max<std::size_t>(spec.panels.size(), 1) + columns - 1) / columns);
  const int panel_h = std::max(single ? 180 : 124,
                               (text_width_px(heatmap_axis_title(spec.y_title), 9) + 16 - top - bottom - (rows - 1) * gap_y) / rows);
  const Layout l = layout_for(spec.panels.size(), panel_w, panel_h, left, right, top, bottom, gap_x, gap_y);
  const double L = log10_range(spec.range);

  GnuplotFigure fig = figure_for(spec, l, "");

  const SpeedupGrid axes = spec.panels.empty() ? SpeedupGrid() : spec.panels.front().grid;
  std::ostringstream data;
  data << "# " << fig.description << "\n"
       << "# speedup = baseline time / target time; baseline: " << spec.baseline_label << "; target: " << spec.target_label
       << "\n# Per panel two data sets (gnuplot index 2p and 2p+1):\n"
       << "#   cells: " << axes.x_column << " " << axes.y_column
       << " x_low x_high y_low y_high log10_speedup speedup label label_rgb\n"
       << "#   the 1x contour: segments of two points (" << axes.x_column << " " << axes.y_column << "), one blank line apart\n";
  for (std::size_t p = 0; p < spec.panels.size(); ++p) {
    const SpeedupGrid& g = spec.panels[p].grid;
    const auto xe = edges(g.xs, g.x_log), ye = edges(g.ys, g.y_log);
    data << "# panel " << p << ": " << spec.panels[p].title << " (" << g.slice << ")\n";
    data << "NaN NaN NaN NaN NaN NaN NaN NaN \"\" 0\n";  // keeps the set counted when the panel has no point
    for (std::size_t i = 0; i < g.xs.size(); ++i)
      for (std::size_t j = 0; j < g.ys.size(); ++j) {
        if (!g.speedup[i][j]) continue;
        const double s = *g.speedup[i][j];
        const double v = std::log10(s);
        // White labels on the saturated ends of the palette, black elsewhere.
        const int rgb = std::fabs(v) > 0.62 * L ? 0xffffff : 0x000000;
        data << axis_number(g.xs[i]) << " " << axis_number(g.ys[j]) << " " << gp_number(xe[i]) << " " << gp_number(xe[i + 1]) << " "
             << gp_number(ye[j]) << " " << gp_number(ye[j + 1]) << " " << gp_number(v) << " " << gp_number(s) << " \""
             << format_speedup(s) << "\" " << rgb << "\n";
      }
    data << "\n\n";
    write_contour(data, unit_contour(g), false);
  }
  fig.data = data.str();

  std::ostringstream b;
  const double W = l.width_px, H = l.height_px;
  b << colour_scale(spec, l, right, top, bottom) << log_scales(axes)
    << "set style fill solid 1.0 noborder\n"
    << "set tics front\n"
    << "set key off\n"
    << title_labels(spec, l)
    << "set multiplot layout " << l.rows << "," << l.columns << " margins screen " << gp_number(left / W) << ", "
    << gp_number(1 - right / W) << ", " << gp_number(bottom / H) << ", " << gp_number(1 - top / H) << " spacing screen "
    << gp_number(gap_x / W) << ", " << gp_number(gap_y / H) << "\n";
  for (std::size_t p = 0; p < spec.panels.size(); ++p) {
    const SpeedupGrid& g = spec.panels[p].grid;
    const auto xe = edges(g.xs, g.x_log), ye = edges(g.ys, g.y_log);
    const std::size_t col = p % static_cast<std::size_t>(l.columns);
    const bool left_column = col == 0;
    const bool bottom_row = p + static_cast<std::size_t>(l.columns) >= spec.panels.size();
    b << "set title " << gp_quoted(spec.panels[p].title) << " offset 0,-0.7\n"
      << "set xrange [" << gp_number(xe.front()) << ":" << gp_number(xe.back()) << "]\n"
      << "set yrange [" << gp_number(ye.front()) << ":" << gp_number(ye.back()) << "]\n"
      << "set xtics " << size_tics(g.xs, bottom_row) << " out nomirror scale 0.6,0.3 offset 0,0.3\n"
      << "set ytics " << size_tics(g.ys, left_column) << " out nomirror scale 0.6,0.3 offset 0.4,0\n"
      << "set xlabel " << (bottom_row ? gp_quoted(heatmap_axis_title(spec.x_title)) : std::string("\"\"")) << " offset 0,0.8\n"
      << "set ylabel " << (left_column ? gp_quoted(heatmap_axis_title(spec.y_title)) : std::string("\"\"")) << " offset 0.6,0\n"
      // Cells without a point show as grey, not as the palette's 1x white.
      << "set object 1 rectangle from graph 0,0 to graph 1,1 behind fillcolor rgb \"#d9d9d9\" fillstyle solid 1.0 noborder\n"
      << (p + 1 == spec.panels.size() ? "set colorbox\n" : "unset colorbox\n");
    const int cells = 2 * static_cast<int>(p), contour = cells + 1;
    b << "plot datafile index " << cells << " using 1:2:3:4:5:6:7 with boxxyerror fillcolor palette notitle";
    // The values in the cells when there is room: one panel only.
    if (single) b << ", \\\n     datafile index " << cells << " using 1:2:9:10 with labels textcolor rgb variable font \",5.5\" notitle";
    if (!unit_contour(g).empty())
      b << ", \\\n     datafile index " << contour << " using 1:2 with lines linewidth 2 linecolor rgb \"black\" notitle";
    b << "\n";
    // Screen labels would be drawn again with every panel.
    if (p == 0) b << "unset label 98\nunset label 99\n";
  }
  b << "unset multiplot\n";
  fig.body = b.str();
  return fig;
}

GnuplotFigure speedup_surface3d_figure(const SurfaceFigureSpec& spec_in) {
  const bool single = spec_in.panels.size() == 1;
  // Small panels carry no axis titles: the subtitle names the axes once.
  SurfaceFigureSpec spec = spec_in;
  if (!single)
    spec.subtitle += std::string(spec.subtitle.empty() ? "" : "\n") + "left axis: " + spec.x_title + ", right axis: " + spec.y_title;
  // Several panels show no axis titles or colour box (the z tics give the scale), to leave the room
  // to the surfaces.
  int title_lines = 1;
  for (const auto& p : spec.panels) title_lines = std::max(title_lines, line_count(p.title));
  const int left = single ? 14 : 16, right = single ? 66 : 16,
            top = top_margin(spec) - (single ? 20 : 4) + 11 * (title_lines - 1), bottom = 0, gap_x = 10,
            gap_y = 4 + 11 * (title_lines - 1);
  const int columns = layout_for(spec.panels.size(), 1, 1, 0, 0, 0, 0, 0, 0).columns;
  // One panel titles its axes, each along its side of the box (a multi-panel figure's subtitle names them).
  const int titles_w = single ? text_width_px(spec.x_title, 9) + text_width_px(spec.y_title, 9) + 40 : 0;
  const int panel_w = std::max(fitted_panel_width(spec, single ? 290 : 200, columns, left + right + (columns - 1) * gap_x), titles_w);
  const int panel_h = single ? 215 : 150 + 12 * title_lines;
  const Layout l = layout_for(spec.panels.size(), panel_w, panel_h, left, right, top, bottom, gap_x, gap_y);
  const double L = log10_range(spec.range);

  GnuplotFigure fig = figure_for(spec, l, ", 3D surface");

  const SpeedupGrid axes = spec.panels.empty() ? SpeedupGrid() : spec.panels.front().grid;
  std::ostringstream data;
  data << "# " << fig.description << "\n"
       << "# speedup = baseline time / target time; baseline: " << spec.baseline_label << "; target: " << spec.target_label
       << "\n# Per panel three data sets (gnuplot index 3p, 3p+1, 3p+2):\n"
       << "#   surface: " << axes.x_column << " " << axes.y_column << " log10_speedup (NaN: no point), one block per "
       << axes.x_column << "\n"
       << "#   the 1x plane: its four corners; the 1x contour: segments at z = 0\n";
  for (std::size_t p = 0; p < spec.panels.size(); ++p) {
    const SpeedupGrid& g = spec.panels[p].grid;
    data << "# panel " << p << ": " << spec.panels[p].title << " (" << g.slice << ")\n";
    for (std::size_t i = 0; i < g.xs.size(); ++i) {
      for (std::size_t j = 0; j < g.ys.size(); ++j) {
        const auto& s = g.speedup[i][j];
        data << axis_number(g.xs[i]) << " " << axis_number(g.ys[j]) << " " << (s ? gp_number(std::log10(*s)) : "NaN") << "\n";
      }
      data << "\n";
    }
    if (g.xs.empty() || g.ys.empty()) {
      data << "NaN NaN NaN\n\n\nNaN NaN NaN\n\n\n";  // placeholders keep the later data sets' indices
    } else {
      const std::string x0 = axis_number(g.xs.front()), x1 = axis_number(g.xs.back()), y0 = axis_number(g.ys.front()),
                        y1 = axis_number(g.ys.back());
      data << "\n" << x0 << " " << y0 << " 0\n" << x0 << " " << y1 << " 0\n\n"
           << x1 << " " << y0 << " 0\n" << x1 << " " << y1 << " 0\n\n\n";
    }
    write_contour(data, unit_contour(g), true);
  }
  fig.data = data.str();

  std::ostringstream b;
  const double W = l.width_px, H = l.height_px;
  b << colour_scale(spec, l, right, top + 20, bottom + 30) << (single ? "" : "unset colorbox\n") << "set zrange [" << gp_number(-L) << ":" << gp_number(L) << "]\n"
    << "set ztics " << speedup_tics(spec.range) << " scale 0.5\n"
    << log_scales(axes)
    // Looking from the large sizes, where the crossovers lie. The surfaces are drawn in order, the
    // translucent 1x plane first, so the colours of the surface above it stay true (pm3d depth
    // sorting would also bury the crossover line, which is drawn last).
    << (single ? "set view 56, 215, 1.05, 1.1\n" : "set view 56, 215, 1.1, 1.2\n")
    << "set xyplane relative 0\n"
    // No margins inside a panel (but its title's lines): the 3D box then fills the panel instead of
    // floating in its middle.
    << "set tmargin " << (title_lines > 1 || !spec.panels.front().title.empty() ? title_lines + 1 : 0) << "\nset bmargin 0\n"
    << "set pm3d border linewidth 0.4 linecolor rgb \"#606060\"\n"
    << "set grid xtics ytics ztics linecolor rgb \"#d0d0d0\"\n"
    << "set key off\n"
    << title_labels(spec, l) << "set multiplot\n";
  const double panel_w_screen = static_cast<double>(panel_w) / W, panel_h_screen = static_cast<double>(panel_h) / H;
  for (std::size_t p = 0; p < spec.panels.size(); ++p) {
    const SpeedupGrid& g = spec.panels[p].grid;
    if (g.xs.empty() || g.ys.empty()) continue;
    const int col = static_cast<int>(p) % l.columns, row = static_cast<int>(p) / l.columns;
    const double x0 = (left + col * (panel_w + gap_x)) / W;
    const double y0 = 1 - (top + (row + 1) * panel_h + row * gap_y) / H;
    b << "set origin " << gp_number(x0) << ", " << gp_number(y0) << "\nset size " << gp_number(panel_w_screen) << ", "
      << gp_number(panel_h_screen) << "\n"
      << (spec.panels[p].title.empty() ? std::string("unset title\n")
                                        : "set title " + gp_quoted(spec.panels[p].title) + " offset 0,0\n")
      << "set xrange " << surface_range(g.xs, g.x_log) << "\n"
      << "set yrange " << surface_range(g.ys, g.y_log) << "\n"
      << "set xtics " << size_tics(g.xs, true, single ? 2 : 4) << " offset 0.2,-0.3 scale 0.5\n"
      << "set ytics " << size_tics(g.ys, true, single ? 2 : 5) << " offset -0.2,-0.3 scale 0.5\n"
      << "set xlabel " << (single ? gp_quoted(spec.x_title) : std::string("\"\"")) << " offset 0,-0.4 rotate parallel\n"
      << "set ylabel " << (single ? gp_quoted(spec.y_title) : std::string("\"\"")) << " offset 0,-0.4 rotate parallel\n"
      << "set zlabel " << (single ? "\"speedup\"" : "\"\"") << " rotate parallel offset -1,0\n";
    const int surface = 3 * static_cast<int>(p), plane = surface + 1, contour = surface + 2;
    b << "splot datafile index " << plane << " using 1:2:3 with pm3d fillcolor rgb \"#C0404040\" notitle, \\\n"
      << "      datafile index " << surface << " using 1:2:3 with pm3d notitle";
    if (!unit_contour(g).empty())
      b << ", \\\n      datafile index " << contour << " using 1:2:3 with lines linewidth 2 linecolor rgb \"black\" notitle";
    b << "\n";
    if (p == 0) b << "unset label 98\nunset label 99\n";
  }
  b << "unset multiplot\n";
  fig.body = b.str();
  return fig;
}

}  // namespace tilesim::analysis
