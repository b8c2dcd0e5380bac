#pragma once
// Renders figures with gnuplot, two processes at a time (the figures are independent and this
// machine class has two cores), returning the files in the figures' order.
#include <string>
#include <vector>

#include "analysis/gnuplot.hpp"

namespace tilesim::cli {

std::vector<analysis::RenderedFigure> render_figures(const std::string& dir, const std::vector<analysis::GnuplotFigure>& figures);

// --out when given (`out_dir`), else plots/ beside `input`, the file the figures are drawn from.
std::string plots_dir(const std::string& out_dir, const std::string& input);

// Renders `figures` into `dir` (render_figures) and prints a line per figure on standard output: its
// PDF, then the names of its script and data beside it.
void render_and_list(const std::string& dir, const std::vector<analysis::GnuplotFigure>& figures);

// "ipu:bow" -> "ipu-bow", "validation/hydronet-gnn/a100" -> "measured-a100": a backend name or
// reference path as part of a figure's file name.
std::string file_slug(const std::string& name);

}  // namespace tilesim::cli
