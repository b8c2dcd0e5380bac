#pragma once
// A workload sweep's results.csv (docs/sweep-format.md, "results.csv of a workload sweep") read as
// result rows, so that the speedup surfaces (`tilesim plot surface`, analysis/speedup_axes.hpp) draw
// over its axes as over an op sweep's sizes, with one pairing of rows for both kinds of file.
//
// A row becomes: op = the name the figures go by (the workload's name when every row has the same one,
// else the name of the folder holding the file: the sweep's, out/NAME/results.csv); no sizes and no
// dtype; the backend, kind and verified cells as they are; time_s = total_time_s (the run's device
// time) where status is ok, none where the point did not fit; machine = the backend's machine with its
// what-if overrides ("bow{chip.num_tiles=736}" for "ipu:bow{chip.num_tiles=736}", "" without); and
// point_columns = the cells that identify the point: workload, knob, batch_size, run and one per axis.
// The point index (`point`) is left out: the axes say the same, and it would split every cell.
#include <string>
#include <vector>

#include "analysis/results_table.hpp"

namespace tilesim::analysis {

// Whether a header (split into names) is a workload sweep's: it holds workload, point, total_time_s and
// status, and no op.
bool is_workload_sweep_header(const std::vector<std::string>& header);

// Reads a workload sweep's results.csv as above. Throws InputError naming the file and line for a
// header without the columns read, a row whose cells do not match the header, or a row that ran (status
// ok) without a time in seconds > 0 in total_time_s.
std::vector<ResultRow> read_workload_sweep_rows(const std::string& path);

// Either kind of results.csv, told apart by its header: a workload sweep's (read_workload_sweep_rows;
// `workload_sweep` set when not null) or an op sweep's (read_results_csv, with its errors).
std::vector<ResultRow> read_speedup_rows(const std::string& path, bool* workload_sweep = nullptr);

}  // namespace tilesim::analysis
