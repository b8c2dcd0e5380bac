#pragma once
// Sensitivity of a workload's time to each machine figure, from a sweep over machine figures
// (docs/sweep-format.md, "Machine axes"): every row whose machine is a what-if machine
// (common/machine_overrides.hpp) is placed by its base backend, its op and the figures it sets. For
// each figure, the rows that differ only in that figure (the same point, the same other figures) are
// compared with the one at the figure's first value: time(value) / time(first value). Over all such
// groups each value gets the median and the range of that ratio. `tilesim plot sensitivity` draws them
// as lines (time against each figure) and as a tornado (each figure's span of time, one bar per figure).
#include <optional>
#include <string>
#include <vector>

#include "analysis/results_table.hpp"
#include "common/machine_overrides.hpp"

namespace tilesim::analysis {

struct SensitivityCurve {
  std::string backend;  // the base backend, "ipu:bow", "gpu-model:a100-40gb:eager"
  std::string op;
  std::string figure;   // the figure's path in the machine file, "chip.tile_clock_hz"
  bool scale = false;   // the values are factors on the base machine's figure (`*=`), not the figure itself
  std::vector<double> values;  // ascending; the first is the reference
  // Per value: the time relative to the reference value's, over every group that has both.
  std::vector<double> median_ratio, min_ratio, max_ratio;
  std::vector<std::size_t> groups;  // how many groups each value's ratios are over
};

// "ipu:bow{chip.a=1}:static" -> "ipu:bow:static": a what-if backend's base backend (a name without
// overrides is its own base). Shared with the Pareto fronts (analysis/pareto.hpp), which group alike.
std::string what_if_base_backend(const std::string& backend);

// A row's point within its backend's grid, "256x16x2048/float32/0": shape, dtype and repeat, then a
// workload sweep's point cells ("/model[*].out=16").
std::string grid_point_key(const ResultRow& row);

// The median of time ratios (the mean of the middle two of an even count), as the sensitivity curves
// and the contour maps report them.
double ratio_median(std::vector<double> v);

// The figures a row's what-if machine sets (nullopt for a machine named without overrides). Throws
// InputError naming results_file, the row's line and the machine column for a name that does not parse.
// Shared with the Pareto fronts and the contour maps.
std::optional<MachineOverrides> row_overrides(const ResultRow& row, const std::string& results_file);

// Every (base backend, op, figure) that takes at least two values in `rows`, in the order the rows name
// them. Rows without a time (does-not-fit) or on a machine without overrides are left out; `ops`, when
// not empty, keeps only those ops. Throws InputError (naming results_file and the row's line) for a
// machine name whose overrides do not parse, and when no figure varies (not a machine sweep).
std::vector<SensitivityCurve> machine_sensitivity(const std::vector<ResultRow>& rows, const std::string& results_file,
                                                  const std::vector<std::string>& ops = {});

}  // namespace tilesim::analysis
