#pragma once
// Iso-performance maps over two machine figures, from a sweep over machine figures
// (docs/sweep-format.md, "Machine axes"; docs/analysis.md, "tilesim plot contour"). Rows are grouped by
// base backend and op as the sensitivity groups them (what_if_base_backend); within a group a cell is
// one setting of the x figure and one of the y figure. Every other figure the sweep varies is held at
// the base machine's setting (a scale of 1), or at its smallest value when the sweep has no such
// setting, so that a cell's rows differ only in their grid point. A cell's value is its time relative
// to the reference cell (x and y at the base setting, else at their first values): the median, over the
// grid points both cells ran, of time(cell) / time(reference).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "analysis/results_table.hpp"

namespace tilesim::analysis {

struct ContourMap {
  std::string backend;  // the base backend, "ipu:bow", "gpu-model:a100-40gb:eager"
  std::string op;
  std::string kind;     // the rows' kind: "simulated" or "modeled"
  std::string x_figure, y_figure;  // figure paths, "chip.sram_bytes_per_tile"
  bool x_scale = false, y_scale = false;  // the values are factors on the base's figure (`*=`), not the figure
  std::vector<double> x_values, y_values;  // ascending
  std::size_t x_reference = 0, y_reference = 0;  // the reference cell's indices into the values
  // Per cell, [y index][x index]: the median relative time, nullopt where the cell shares no point
  // with the reference cell (a hole), and how many points each median is over.
  std::vector<std::vector<std::optional<double>>> relative_time;
  std::vector<std::vector<std::size_t>> shared_points;
  std::vector<std::string> held;  // the other figures' settings kept, "chip.num_tiles*=1", in path order
  std::size_t points = 0;         // the grid points any kept row ran
};

// One map per (base backend, op) with at least two values of each figure, in the order the rows name
// them; `ops` / `backends` (base backend names), when not empty, keep only those. Rows without a time
// (does-not-fit) or on a machine without overrides are left out. Throws InputError naming results_file
// for a figure no row sets, for x equal to y, for a machine name whose overrides do not parse, and
// when no group has two values of each figure.
std::vector<ContourMap> contour_maps(const std::vector<ResultRow>& rows, const std::string& results_file, const std::string& x_figure,
                                     const std::string& y_figure, const std::vector<std::string>& ops = {},
                                     const std::vector<std::string>& backends = {});

// "chip.sram_bytes_per_tile (factor on the base machine's)" for a scaled figure, the path otherwise.
std::string contour_axis_label(const std::string& figure, bool scale);

}  // namespace tilesim::analysis
