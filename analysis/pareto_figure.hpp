#pragma once
// The figures and the table of `tilesim plot pareto` (analysis/pareto.hpp): per base backend and op,
// every machine that runs the whole grid as a point (cost on x, total time on y), the front drawn
// through its machines, and the base machine's point ringed where it is among them.
#include <string>
#include <vector>

#include "analysis/gnuplot.hpp"
#include "analysis/pareto.hpp"

namespace tilesim::analysis {

// One figure per group with a machine that runs every point, stem "pareto_<backend>_<op>".
std::vector<GnuplotFigure> pareto_figures(const std::vector<ParetoGroup>& groups);

// Per group: a heading (cost, points, how many machines), one line per machine on the front (backend,
// cost, total time, speedup against the base machine where it is among the rows), then the machines
// left out for missing points, each with how many it misses.
std::string pareto_table(const std::vector<ParetoGroup>& groups);

}  // namespace tilesim::analysis
