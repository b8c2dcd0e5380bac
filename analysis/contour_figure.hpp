#pragma once
// The figures and the table of `tilesim plot contour` (analysis/contour.hpp): per base backend and op, a
// heat map of the time relative to the reference cell over two machine figures, with iso-lines at a few
// relative times drawn on top, and the same matrix as text.
#include <string>
#include <vector>

#include "analysis/contour.hpp"
#include "analysis/gnuplot.hpp"

namespace tilesim::analysis {

// The relative times the iso-lines are drawn at.
inline constexpr double kContourLevels[] = {0.5, 0.75, 1.0, 1.5, 2.0};

// One figure per map, stem "contour_<backend>_<op>".
std::vector<GnuplotFigure> contour_figures(const std::vector<ContourMap>& maps);

// Per map: a heading (figures, points, the held settings), the matrix of relative times (rows: y values,
// columns: x values, "-" for a hole), and the holes listed.
std::string contour_table(const std::vector<ContourMap>& maps);

}  // namespace tilesim::analysis
