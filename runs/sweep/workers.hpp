#pragma once
// --jobs N > 1: the simulated and modeled points in N worker processes, each with its own simulator
// (the SystemC engine is a process-wide singleton and not thread-safe, so threads cannot share it).
// Each worker claims the next point as it finishes the last (a cursor in memory the workers share) and
// sends back one line per row; the parent alone appends them to results.csv. The simulated backends
// are warmed up (Backend::warm_up) before the fork, so the workers share one build of their engines.
#include <cstddef>
#include <string>
#include <vector>

#include "runs/sweep/point_runner.hpp"
#include "runs/sweep/tally.hpp"
#include "workloads/sweep_points.hpp"

namespace tilesim::runs::sweep {

// Runs the points `indices` of `points` in min(jobs, their number) forked workers and records their rows. Stops the workers when
// one fails (rethrown as an Error naming the rows already in `csv_path`), dies, or --stop-after is
// reached.
void run_in_workers(const analysis::SweepPoints& points, const std::vector<std::size_t>& indices, int jobs, PointRunner& runner,
                    const std::vector<std::string>& backend_names, Recorder& recorder, const std::string& csv_path);

}  // namespace tilesim::runs::sweep
