#pragma once
// Speedup surfaces over any two columns of the results (`tilesim plot surface --x COLUMN --y COLUMN`,
// docs/analysis.md): the cells that identify a point, which of them vary, the grids over two of them,
// and the checks that name a bad column. The default columns, num_inputs across and num_outputs up,
// give the surfaces as they always were (analysis/speedup.hpp grids_per_feature and
// grid_averaged_over_features are these grids with their own slice names).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/results_table.hpp"
#include "analysis/speedup.hpp"

namespace tilesim::analysis {

// The cells that identify a point, by column name: an op sweep's sizes (num_inputs, num_features,
// num_outputs) and dtype where the point has them, and every column of PointId::columns.
std::map<std::string, std::string> point_cells(const PointId& id);
// A row's, as series_from_rows identifies it (its what-if machine's figures are not among them: they
// name the machine, not the point).
std::map<std::string, std::string> row_point_cells(const ResultRow& row);

// What a surface is drawn over, and what becomes of the other columns that vary.
struct SurfaceAxes {
  std::string x = "num_inputs", y = "num_outputs";
  bool average_all = false;               // every other varying column averaged: one panel
  std::vector<std::string> average_over;  // else these are averaged, and each other one splits panels
  bool is_default() const { return x == "num_inputs" && y == "num_outputs"; }
};

// The columns other than x and y whose cells differ between two points of one (x, y) cell, in name
// order. A column tied to an axis (a workload sweep's batch_size beside its loader.batch_size axis)
// never differs within a cell, so it is not one: it would only split the surface into slivers.
std::vector<std::string> varying_columns(const std::vector<SpeedupSample>& points, const std::string& x, const std::string& y);

// The varying columns that give one panel per value: those not averaged (none with average_all).
std::vector<std::string> panel_columns(const std::vector<SpeedupSample>& points, const SurfaceAxes& axes);

// Whether an axis over `values` is drawn log scale: when every value is positive and the largest is
// more than 8 times the smallest (a narrower span reads better linear).
bool log_axis_fits(const std::vector<double>& values);

// The grids over (x, y): one per combination of `panels`' cells present (ascending, numbers by value;
// one grid when `panels` is empty, none when there are no points). Every grid spans every x and y value
// of the points, so the panels of a figure line up. A cell holds the geometric mean of its speedups (the
// mean of their logs): with `mean_always` even of one (exp(log s)), else one speedup is kept as is. Axes
// are log with `force_log`, else by log_axis_fits. Each point must hold a number in x and in y
// (require_axis_values); slices read "loader.batch_size = 64, dtype = float16", and name what the
// cells average over.
std::vector<SpeedupGrid> grids_over(const std::vector<SpeedupSample>& points, const std::string& x, const std::string& y,
                                    const std::vector<std::string>& panels, bool mean_always, bool force_log);

// The grids of `axes`: grids_over with the panel columns of `axes`, averaging when asked; log axes for
// the default columns as always, else by log_axis_fits.
std::vector<SpeedupGrid> speedup_grids(const std::vector<SpeedupSample>& points, const SurfaceAxes& axes);

// The columns of `rows` an axis can be: the point cells that hold a number in every row, in row-cell
// order (the sizes first), then the figures the rows' what-if machines set, each once.
std::vector<std::string> numeric_point_columns(const std::vector<ResultRow>& rows, const std::string& results_file);

// Throws InputError naming `results_file` (and the line), `option` ("--x"), the column and what was
// found, and the columns it could be, unless `column` is a point cell of every row holding a number
// there, or a figure some row's what-if machine sets.
void require_axis_column(const std::vector<ResultRow>& rows, const std::string& results_file, const std::string& column,
                         const std::string& option);

// Throws InputError (naming the file, `option`, the column and the columns the rows have) unless
// `column` is a point cell of some row or a figure some row's what-if machine sets: for --average-over.
void require_known_column(const std::vector<ResultRow>& rows, const std::string& results_file, const std::string& column,
                          const std::string& option);

// Throws InputError unless every sample holds a number in `column`: a machine figure is only there when
// the target or baseline names a family of what-if machines (what_if_family_series).
void require_axis_values(const std::vector<SpeedupSample>& points, const std::string& results_file, const std::string& column,
                         const std::string& option, const std::string& pair);

// The rows of every what-if machine of `base` ("ipu:bow" for "ipu:bow{chip.sram_bytes_per_tile*=2}") as
// one series named `base`, each point carrying its machine's figures as columns (path -> the value set,
// or the factor of a scaled figure), so that a surface can be drawn over them. nullopt when no row's
// backend is a what-if machine of `base`. Throws InputError for a machine name that does not parse.
std::optional<TimeSeries> what_if_family_series(const std::vector<ResultRow>& rows, const std::string& base,
                                                const std::string& results_file);

// `column` as an axis title: the column, or for a machine figure the rows scale (`*=`) "PATH (× base)":
// its values are factors on the base machine's figure (short, so that a long path still fits beside a
// panel).
std::string axis_title(const std::vector<ResultRow>& rows, const std::string& results_file, const std::string& column);

}  // namespace tilesim::analysis
