#pragma once
// The speedup surfaces as figures (rendered by analysis/gnuplot.hpp to SVG, PNG and PDF):
//  - a heat map over the grids' two columns, (num_inputs x num_outputs) unless asked otherwise, on log
//    axes (linear where a grid says: analysis/speedup_axes.hpp), colour = speedup on a log scale
//    centred on 1x (blue: the target is faster, red: the baseline is), the 1x contour drawn in black;
//  - a 3D surface of the same data with the 1x plane drawn (grey, translucent) and the crossover line.
// Several panels share one colour scale: one per feature size, or one per (target, baseline) pair, so
// a modelled surface and a measured one sit side by side on the same scale.
#include <string>
#include <vector>

#include "analysis/gnuplot.hpp"
#include "analysis/speedup.hpp"

namespace tilesim::analysis {

struct SurfacePanel {
  std::string title;  // "num_features = 64", or "Bow IPU (simulated) over A100 (measured)"
  SpeedupGrid grid;
};

struct SurfaceFigureSpec {
  std::string stem;
  std::string title;      // first line: op and what is divided by what
  std::string subtitle;   // second, smaller line ("" for none)
  std::string baseline_label, target_label;  // for the colour-box label ("target faster" / "baseline faster")
  // The axes' titles: the columns the grids are over (analysis/speedup_axes.hpp axis_title). The heat
  // map adds "(rows)" to num_inputs and num_outputs.
  std::string x_title = "num_inputs", y_title = "num_outputs";
  std::vector<SurfacePanel> panels;
  // The colour scale runs from 1/range to range (log); the same for every panel.
  double range = 10;
};

// The colour range that covers every speedup of the panels: the smallest of 2, 4, 10, 30, 100, 1000,
// 10000 that is >= max(s, 1/s) over all speedups s (10000 when none is; beyond it colours saturate).
double surface_colour_range(const std::vector<SurfacePanel>& panels);

GnuplotFigure speedup_heatmap_figure(const SurfaceFigureSpec& spec);
GnuplotFigure speedup_surface3d_figure(const SurfaceFigureSpec& spec);

}  // namespace tilesim::analysis
