#pragma once
// What a sweep will run: the points not yet in results.csv, said on stdout backend by backend, and a
// warning when other work on the host would disturb the measured points.
#include <cstddef>
#include <string>
#include <vector>

#include "runs/sweep/sweep_backends.hpp"
#include "workloads/sweep_points.hpp"

namespace tilesim::runs::sweep {

struct PendingPoints {
  std::vector<std::size_t> points;              // still to run: their SweepPoints indices, in sweep order
  std::vector<std::size_t> per_backend;         // every point of the sweep, per backend
  std::vector<std::size_t> pending_per_backend; // those still to run, per backend
};

// `done`: one flag per point (DonePoints::done; empty when nothing is done yet).
PendingPoints pending_points(const analysis::SweepPoints& points, const std::vector<bool>& done,
                             const std::vector<SweepBackendRun>& backends);

// The user's record of which points each backend covers, and how they run.
void print_plan(const analysis::SweepSpec& spec, std::size_t total_points, const std::vector<SweepBackendRun>& backends,
                const PendingPoints& pending, std::size_t foreign_rows, const std::string& csv_path);

// Other work on the host stalls the OpenMP team of a measured kernel (a busy core can hold a worker
// for a whole scheduler slice), so say so before measuring rather than after.
void warn_if_host_busy(const std::vector<SweepBackendRun>& backends, const PendingPoints& pending);

}  // namespace tilesim::runs::sweep
