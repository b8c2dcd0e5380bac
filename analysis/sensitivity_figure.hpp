#pragma once
// The figures and the table of `tilesim plot sensitivity` (analysis/sensitivity.hpp): per machine
// figure, a line plot of time (relative to the figure's first value) against the figure, one line per
// backend and op with the range over the sweep's points as error bars; per backend, a tornado of each
// figure's span (the least and the most relative time over its values), widest first.
#include <string>
#include <vector>

#include "analysis/gnuplot.hpp"
#include "analysis/sensitivity.hpp"

namespace tilesim::analysis {

// The line figures (stem "sensitivity_<figure>") then the tornados (stem "tornado_<backend>").
std::vector<GnuplotFigure> sensitivity_figures(const std::vector<SensitivityCurve>& curves);

// One line per curve: backend, op, figure, its first and last value, and the median relative time at
// the last value (with its range), for a terminal or a paper's notes.
std::string sensitivity_table(const std::vector<SensitivityCurve>& curves);

}  // namespace tilesim::analysis
