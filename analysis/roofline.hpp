#pragma once
// Rooflines: a machine's ceilings (peak FLOP/s per dtype, bandwidth per memory level) and the points
// of result rows under them, as two figures per backend:
//  - the roofline: achieved FLOP/s against arithmetic intensity (FLOP/byte), log-log, one marker per
//    point and memory level (hierarchical roofline: the same FLOP/s at each level's intensity);
//  - the bandwidth view: achieved bandwidth against bytes moved at each level, with the bandwidth
//    ceilings. Gather does no FLOPs, so it appears here only.
// The ceilings come from machine files (the apps layer reads them); this file only draws.
#include <optional>
#include <string>
#include <vector>

#include "analysis/gnuplot.hpp"
#include "analysis/results_table.hpp"

namespace tilesim::analysis {

struct Ceiling {
  bool compute = false;   // true: FLOP/s for a dtype; false: bytes/s at a memory level
  std::string name;       // compute: the dtype ("float32", "float16"); bandwidth: the level ("hbm", "tile_sram")
  std::string label;      // as the legend shows it: "HBM", "fp32 (AMP)", "DRAM random gather"
  double value = 0;       // FLOP/s or bytes/s
  std::string source;     // where the figure comes from (machine file and its source text)
  bool secondary = false; // drawn dashed: a second ceiling at the same level (random-access gather bandwidth)
};

struct RooflineMachine {
  std::string backend;               // the backend whose rows are drawn ("ipu:bow")
  std::string title;                 // "Bow IPU (simulated)"
  std::vector<std::string> files;    // machine files the ceilings were read from
  std::vector<Ceiling> ceilings;
  std::vector<std::string> notes;    // what is missing or assumed, printed and written beside the figure
};

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
