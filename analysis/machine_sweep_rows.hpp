#pragma once
// The rows the design-space plots read (`tilesim plot sensitivity`, `plot pareto`, `plot contour`): a
// sweep over machine figures compares each point's time across the what-if machines, whether the
// sweep's points are op sizes (an op sweep's results.csv, analysis/results_table.hpp) or workloads (a
// workload sweep's, results/workload_sweep_columns.hpp).
//
// A workload sweep's row becomes an op row with: op = the workload's name; its point = the `point`
// column (held in shape.num_inputs, so grid_point_key tells the points apart, num_features and
// num_outputs 0); time_s = epoch_time_s where the run has a loader's epoch, else total_time_s (every
// step of the run), none where status is does_not_fit; machine = the backend's machine part with its
// overrides ("ipu:bow{chip.a=1}" -> "bow{chip.a=1}"), as an op sweep's machine column holds it.
#include <string>
#include <vector>

#include "analysis/results_table.hpp"

namespace tilesim::analysis {

// Reads either kind of results.csv, told apart by its header. InputError (exit 2) naming the file,
// line and column for a workload row whose time or point is not a number.
std::vector<ResultRow> read_machine_sweep_rows(const std::string& path);

// "ipu:bow{chip.a=1}:static" -> "bow{chip.a=1}": the machine of a backend name ("" when it names none).
std::string backend_machine_part(const std::string& backend);

}  // namespace tilesim::analysis
