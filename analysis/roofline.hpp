#pragma once
// Rooflines: a machine's ceilings (peak FLOP/s per dtype, bandwidth per memory level) and the points
// of result rows under them, as two figures per backend:
//  - the roofline: achieved FLOP/s against arithmetic intensity (FLOP/byte), log-log, one marker per
//    point and memory level (hierarchical roofline: the same FLOP/s at each level's intensity);
//  - the bandwidth view: achieved bandwidth against bytes moved at each level, with the bandwidth
//    ceilings. Gather does no FLOPs, so it appears here only.
// The ceilings come from machine files (the backends layer reads them); this file only draws.
#include <optional>
#include <string>
#include <vector>

#include "analysis/gnuplot.hpp"
#include "analysis/results_table.hpp"
#include "backends/ceilings.hpp"

namespace tilesim::analysis {

// A machine's ceilings, as its backend family declares them (backends/machine_ceilings.hpp).
using Ceiling = backends::Ceiling;
using RooflineMachine = backends::RooflineMachine;

struct RooflinePoint {
  std::string op;
  OpShape shape;
  std::string level;       // "tile_sram", "exchange", "l2", "hbm", "dram"
  double flops = 0;
  double bytes = 0;        // at this level
  double time_s = 0;
  double flops_per_s() const { return flops / time_s; }
  double bytes_per_s() const { return bytes / time_s; }
  std::optional<double> intensity() const {
    if (!(bytes > 0)) return std::nullopt;
    return flops / bytes;
  }
};

// One point per row of `backend` (with a time) and memory level it reports; repeats stay separate.
std::vector<RooflinePoint> roofline_points(const std::vector<ResultRow>& rows, const std::string& backend);

// The roofline bound at an intensity: min(peak, bandwidth x intensity).
double attainable_flops_per_s(double peak_flops_per_s, double bytes_per_s, double intensity_flops_per_byte);

// Ridge point: the intensity where a bandwidth ceiling meets a compute ceiling (peak / bandwidth).
double ridge_intensity(double peak_flops_per_s, double bytes_per_s);

// The figures (SVG, PNG, PDF). Throws std::invalid_argument for a machine without ceilings.
GnuplotFigure roofline_figure(const RooflineMachine& machine, const std::vector<RooflinePoint>& points, const std::string& stem);
GnuplotFigure bandwidth_figure(const RooflineMachine& machine, const std::vector<RooflinePoint>& points, const std::string& stem);

}  // namespace tilesim::analysis
