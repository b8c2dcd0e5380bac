#pragma once
// The validation figures, as gnuplot data and scripts (rendered by analysis/gnuplot.hpp):
//  - predicted against measured time per op, log-log, with the y = x line and x2 / x0.5 guides;
//    calibration and held-out points drawn differently;
//  - the signed error over the (num_outputs x num_inputs) grid as a heat map, one panel per feature
//    size, on a diverging colour scale centred on 0;
//  - the speedup surface, predicted against measured speedup, with the wrong side of 1x shaded.
#include <string>
#include <vector>

#include "analysis/gnuplot.hpp"
#include "analysis/validation_report.hpp"

namespace tilesim::analysis {

struct ScatterPoint {
  double measured = 0;   // in the figure's unit
  double predicted = 0;
  bool calibration = false;
  OpShape shape;
};

struct ScatterSpec {
  std::string stem;
  std::string title;
  std::string x_label;   // with the unit: "measured time per op (µs)"
  std::string y_label;
  // Speedup figures: draw x = 1 and y = 1 and shade the quadrants where the prediction is on the
  // wrong side of 1x.
  bool speedup_quadrants = false;
  std::string note;      // a second, smaller title line (the figure's summary); may be empty
};

GnuplotFigure scatter_figure(const ScatterSpec& spec, const std::vector<ScatterPoint>& points);

// Signed error (percent) of each point over the grid, one panel per num_features value (at most six
// panels; the points of one machine and op).
GnuplotFigure error_map_figure(const std::string& stem, const std::string& title, const std::vector<ValidationPoint>& points);

// The colour range of the error map: the smallest of 10, 20, 25, 50, 100 % that covers the 95th
// percentile of the absolute error (100 % when none does; larger errors saturate the colour).
double error_map_range_pct(const std::vector<ValidationPoint>& points);

}  // namespace tilesim::analysis
