#pragma once
// Speedup of one backend over another, point by point, and what summarises it: the grids behind the
// speedup surfaces, the 1x contour, median and range, and where the crossover lies. Pure functions
// over result rows and reference measurements.
//   speedup of T over B at a point = B's time / T's time   (> 1: T is faster)
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/reference_data.hpp"
#include "analysis/results_table.hpp"

namespace tilesim::analysis {

// A point without backend or repeat: what two sources are matched on.
struct PointId {
  std::string op;     // the op; a workload sweep's row: the name its figures go by (analysis/workload_results.hpp)
  OpShape shape;      // all zero for a point without sizes (a workload sweep's)
  std::string dtype = "float32";  // "" for a point without one (a workload sweep's)
  // Every other cell that identifies the point, by column name: ResultRow::point_columns (a workload
  // sweep's axes, an op sweep's extra columns) and a what-if family's machine figures
  // (analysis/speedup_axes.hpp). Empty for an op sweep's row and a reference measurement.
  std::map<std::string, std::string> columns = {};
  bool operator<(const PointId& o) const {
    return std::tie(op, shape.num_inputs, shape.num_features, shape.num_outputs, dtype, columns) <
           std::tie(o.op, o.shape.num_inputs, o.shape.num_features, o.shape.num_outputs, o.dtype, o.columns);
  }
};

// Times per point from one source: a backend's rows of results.csv or a reference measurement.
struct TimeSeries {
  std::string name;   // the backend ("ipu:bow") or the reference path as given
  std::string label;  // for figures and tables: "Bow IPU (simulated)", "A100 (measured, hydronet)"
  std::string kind;   // "simulated", "measured" or "modeled"
  std::string mode;   // "timing-only", "eager", ... ("" for a reference)
  std::map<PointId, double> time_s;
  // Points whose time comes from measurements other work disturbed (results.csv's disturbed column):
  // the time is kept, but a ratio taken from it must say so.
  std::set<PointId> disturbed;
};

// The rows of one backend; repeats of a point are reduced to their median time, over the repeats that
// were not disturbed when there are any (else over all, and the point is marked disturbed). Rows
// without a time (does-not-fit) are left out. Throws InputError when the backend has no row, naming
// the backends the rows do have.
TimeSeries series_from_rows(const std::vector<ResultRow>& rows, const std::string& backend, const std::string& file);

// Measured points of a hydronet reference CSV (float32).
TimeSeries series_from_reference(const std::vector<MeasuredPoint>& points, const std::string& name, const std::string& label);

// `spec` names a backend of the rows, or a hydronet reference: a CSV file (its points are for the op
// named by the file's stem: .../a100/gather.csv) or a directory holding OP.csv for each op asked for.
// Throws InputError naming the spec and the backends the rows have when it is neither.
TimeSeries resolve_series(const std::vector<ResultRow>& rows, const std::string& results_file, const std::string& spec,
                          const std::vector<std::string>& ops);

// A label for a backend name (its family's, backends/registry.hpp) or reference path: "ipu:bow" -> "Bow IPU (simulated)",
// "gpu-model:a100-40gb:eager" -> "A100-40GB model (eager)", "cpu" -> "CPU (measured)", "torch-cpu" ->
// "PyTorch CPU (measured)", "cuda:per-call" -> "CUDA GPU (measured, per-call)",
// ".../hydronet-gnn/a100" -> "A100 (measured)".
std::string series_label(const std::string& name, const std::string& kind, const std::string& mode);

struct SpeedupSample {
  PointId id;
  double baseline_s = 0, target_s = 0;
  double speedup = 0;  // baseline_s / target_s
  bool disturbed = false;  // either time was disturbed (TimeSeries::disturbed)
};

// Points both series have, for one op (all ops when `op` is empty), in PointId order. Two points pair
// when op, sizes, dtype and every column both series' points carry agree (PointId::columns): the
// backend alone may differ. A column only one series carries (a what-if family's machine figures) takes
// no part, so a point of the other series pairs with each of its settings, and the sample's id holds
// the columns of both.
std::vector<SpeedupSample> paired_speedups(const TimeSeries& baseline, const TimeSeries& target, const std::string& op);

// Speedups over the (x column x y column) grid of one slice: (num_inputs x num_outputs) unless asked
// otherwise (analysis/speedup_axes.hpp).
struct SpeedupGrid {
  std::string slice;                   // "num_features = 64" or "geometric mean over num_features 16-512"
  std::string x_column = "num_inputs", y_column = "num_outputs";
  // Log2 axes (cells edged at geometric midpoints, the 1x contour found in log2 coordinates), else linear.
  bool x_log = true, y_log = true;
  std::vector<double> xs;              // the x column's values, ascending
  std::vector<double> ys;              // the y column's values, ascending
  std::vector<std::vector<std::optional<double>>> speedup;  // [x index][y index]; nullopt: no point
};

// One grid per num_features value, ascending, over (num_inputs x num_outputs). A cell holds the speedup
// of its one point (the geometric mean should points of several dtypes share it).
std::vector<SpeedupGrid> grids_per_feature(const std::vector<SpeedupSample>& points);
// One grid: at each (num_inputs, num_outputs) the geometric mean of the speedups over the feature sizes
// present there (the mean of log speedups, so 2x and 0.5x average to 1x).
SpeedupGrid grid_averaged_over_features(const std::vector<SpeedupSample>& points);

// The 1x contour of a grid: line segments where log(speedup) crosses 0, by marching squares on the
// cells of the grid in log2 coordinates (linear ones on a linear axis; values interpolated linearly in
// log speedup along each edge; the two ambiguous saddle cases resolved by the cell's mean). Endpoints
// are column values (2^x on a log axis), not logs.
struct Segment {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};
std::vector<Segment> unit_contour(const SpeedupGrid& grid);

// Where speedup = 1 lies: the single threshold on one size measure that best separates the points
// where the target is faster from those where it is not (a decision stump). Measures tried, in order:
// num_inputs, num_features, num_outputs, output elements (num_outputs x num_features) and the op's
// minimum bytes; the first with the highest agreement wins.
struct Crossover {
  bool exists = false;            // false: one side wins everywhere, or no threshold beats that
  std::string measure;            // "num_outputs", "output_elements", "min_bytes", ...
  double below = 0, above = 0;    // the threshold lies between these two measure values
  bool target_faster_above = false;
  double agreement = 0;           // share of points the threshold puts on the right side (0..1)
  std::string text;               // "target faster for num_outputs >= 4096 (97% of points)"
};
Crossover find_crossover(const std::vector<SpeedupSample>& points);

struct SpeedupStats {
  std::size_t count = 0;
  double median = 0, geomean = 0, min = 0, max = 0;
  double target_faster_share = 0;  // share of points with speedup > 1
  Crossover crossover;
};
SpeedupStats summarize_speedups(const std::vector<SpeedupSample>& points);

// "1.23", "45.6", "0.0123": a speedup with three significant digits.
std::string format_speedup(double speedup);
// A share (0..1) as a percentage: whole percent, except that a share short of all (or above none) never
// reads 100% (or 0%): it gets one decimal, or more if needed (593 of 594 points: 99.8%).
std::string share_percent(double share);

}  // namespace tilesim::analysis
