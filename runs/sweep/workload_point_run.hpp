#pragma once
// One point of a workload sweep (docs/sweep-format.md, "Workload sweeps") on one backend, as the cells
// of its results.csv row (results/workload_sweep_columns.hpp), by column name. A workload with a
// loader runs its batches as `tilesim run` does (runs::run_batches), from a loader source shared by
// the points that keep its graph; a parallel workload, a forward pass and training steps on a fixed
// graph run through runs::run, the pipeline behind `tilesim run`.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "backends/backend_spec.hpp"
#include "workloads/loaders/batch_source.hpp"
#include "workloads/workload_sweep.hpp"

namespace tilesim::runs::sweep {

using SweepCells = std::map<std::string, std::string>;

// How every point of the sweep runs (the sweep file's "batches", "ipu" and "cpu").
struct WorkloadPointOptions {
  std::optional<std::int64_t> batches;  // a loader's batches per point (not a parallel one's: its own)
  bool timing_only = true;              // the simulated IPU without "ipu": {"verify": true}
  int warmup = 1, repeats = 3;          // the measured kernels' calls per op
};

// The loader's graph, in-edge index, clusters or dataset, built once for the points that keep the
// same graph, seed, loader kind, parts and dataset: stepping a batch size or a layer width never
// rebuilds a graph that may take seconds. Holds one graph at a time (points change it in sweep order).
class LoaderSources {
 public:
  // A source for the point's workload (which has a loader): derived from the one held when the point
  // keeps its graph, else built anew.
  std::unique_ptr<workloads::loaders::BatchSource> source_for(const workloads::Workload& workload);

 private:
  std::string key_;
  std::unique_ptr<workloads::loaders::BatchSource> base_;
};

// What a point gave on a backend: its row's cells (the point's own columns, the workload, backend,
// axis values and status are the caller's), and whether an output it checked failed verification.
struct PointOutcome {
  SweepCells cells;
  bool failed_verification = false;
  bool does_not_fit = false;
  std::string message;  // why it does not fit: the planner's message
};

// Runs the point on `backend`. A point the backend's machine cannot hold (PlanError) is an outcome with
// does_not_fit (the planner's message on standard error); bad input (InputError) propagates.
PointOutcome run_workload_point(const workloads::WorkloadPoint& point, const backends::BackendSpec& backend,
                                const WorkloadPointOptions& options, LoaderSources& sources);

// A number as results.csv writes it (9 significant digits).
std::string sweep_number(double v);

}  // namespace tilesim::runs::sweep
