#pragma once
// A sweep (docs/sweep-format.md) as a library: every point of the sweep file on every backend it
// names, each finished point appended to results.csv in the request's folder, the summary printed
// when it ends. `tilesim sweep` (apps/sweep_command.cpp) and the Python module's sweeps call it.
#include "runs/sweep/sweep_request.hpp"

namespace tilesim::runs::sweep {

// The exit code `tilesim sweep` gives: 0, or the code of the points that failed (tally.hpp).
int run_sweep(const SweepRequest& request);

// Worker processes for a sweep of op points in one process when --jobs is not given: the cores this
// process may run on (its affinity mask), at most limits::max_jobs.
int default_jobs();

}  // namespace tilesim::runs::sweep
