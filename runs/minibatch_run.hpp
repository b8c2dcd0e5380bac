#pragma once
// A run of a workload with a "loader": the run's batches are made on the host first (each
// batch's sampling or collation timed), then every backend runs one step per batch, in the batch's
// exact shape or, on a backend that runs programs compiled for fixed shapes (the simulated IPU), padded
// to one fixed shape. Trained parameters and optimizer state carry from batch to batch on each backend.
// The report gives per backend the step times (min, median, max), the epoch time, the throughput (the
// epoch's items, from the loader's plan, over the epoch time), the
// padding share, the host's sampling time beside the device's and which of the two bounds the epoch.
#include <memory>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "runs/run_request.hpp"
#include "runs/run_result.hpp"

namespace tilesim::workloads::loaders {
class BatchSource;
}

namespace tilesim::runs {

// What a run of a loader's batches produced: report.json's content, the summary `tilesim run` prints
// (without the report's path), each backend's last batch and whether every batch of every backend was
// verified and agreed.
struct MiniBatchOutcome {
  nlohmann::json report;
  std::string text;
  std::vector<BackendResult> last_batch;
  bool all_verified = true;
};

// Runs the batches of request.workload from `source` (built for it, or derived from another source of
// the same graph) on `backends` (made from request.backends): the request's batches, timing_only,
// warmup and repeats apply. With request.progress, a line on stderr every tenth of the batches.
MiniBatchOutcome run_batches(const RunRequest& request, std::vector<std::unique_ptr<Backend>>& backends,
                             const workloads::loaders::BatchSource& source);

// Runs the batches of request.workload (which has a loader) on `backends` (made from request.backends).
RunResult run_loader(const RunRequest& request, std::vector<std::unique_ptr<Backend>>& backends);

}  // namespace tilesim::runs
