#pragma once
// Running a list of sweep points into a Recorder: in this process one after another, or with
// --jobs N > 1 the simulated and modeled ones in N worker processes first (workers.hpp), then the
// measured ones here, once every worker has exited (a timing must not share the cores with anything).
#include <string>
#include <vector>

#include "apps/sweep/point_runner.hpp"
#include "apps/sweep/sweep_backends.hpp"
#include "apps/sweep/tally.hpp"
#include "workloads/sweep_spec.hpp"

namespace tilesim::cli::sweep {

// `rows_path`: the file the recorder appends to, named in the message of a point that fails (with
// the rows before it kept there). Stops early when the recorder is stopped (--stop-after).
void run_points(const std::vector<analysis::SweepPoint>& points, int jobs, const std::vector<SweepBackendRun>& backends,
                PointRunner& runner, Recorder& recorder, const std::string& rows_path);

}  // namespace tilesim::cli::sweep
