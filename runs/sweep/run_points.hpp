#pragma once
// Running a list of sweep points into a Recorder: in this process one after another, or with
// --jobs N > 1 the simulated and modeled ones in N worker processes first (workers.hpp), then the
// measured ones here, once every worker has exited (a timing must not share the cores with anything).
#include <cstddef>
#include <string>
#include <vector>

#include "runs/sweep/point_runner.hpp"
#include "runs/sweep/sweep_backends.hpp"
#include "runs/sweep/tally.hpp"
#include "workloads/sweep_points.hpp"

namespace tilesim::runs::sweep {

// `rows_path`: the file the recorder appends to, named in the message of a point that fails (with
// the rows before it kept there). Stops early when the recorder is stopped (--stop-after).
// `indices`: the points of `points` to run, in order.
void run_points(const analysis::SweepPoints& points, const std::vector<std::size_t>& indices, int jobs,
                const std::vector<SweepBackendRun>& backends,
                PointRunner& runner, Recorder& recorder, const std::string& rows_path);

}  // namespace tilesim::runs::sweep
