#pragma once
// tilesim run on a workload with a "loader": the run's batches are made on the host first (each
// batch's sampling or collation timed), then every backend runs one step per batch, in the batch's
// exact shape or, on a backend that runs programs compiled for fixed shapes (the simulated IPU), padded
// to one fixed shape. Trained parameters and optimizer state carry from batch to batch on each backend.
// The report gives per backend the step times (min, median, max), the epoch time, the throughput (the
// epoch's items, from the loader's plan, over the epoch time), the
// padding share, the host's sampling time beside the device's and which of the two bounds the epoch.
#include <memory>
#include <string>
#include <vector>

#include "apps/commands.hpp"
#include "backends/registry.hpp"
#include "workloads/workload.hpp"

namespace tilesim::workloads::loaders {
class BatchSource;
}

namespace tilesim::cli {

// What a run of a loader's batches produced: report.json's content, the summary `tilesim run` prints
// (without the report's path) and whether every batch of every backend was verified and agreed.
struct MiniBatchOutcome {
  nlohmann::json report;
  std::string text;
  bool all_verified = true;
};

// Runs the batches of `workload` from `source` (built for it, or derived from another source of the same
// graph) on `backends`: args.batches, timing_only, warmup, repeats and backends (as written, for the
// report) apply. `progress`: a line on stderr every tenth of the batches.
MiniBatchOutcome run_batches(const RunArgs& args, const workloads::Workload& workload, const std::vector<backends::BackendSpec>& specs,
                             std::vector<std::unique_ptr<Backend>>& backends, const workloads::loaders::BatchSource& source,
                             bool progress);

// Runs the batches of `workload` (which has a loader) on `backends` (made from `specs`), writes
// `report_path` and prints the summary. Returns the exit code of `tilesim run`.
int run_minibatch(const RunArgs& args, const workloads::Workload& workload, const std::vector<backends::BackendSpec>& specs,
                  std::vector<std::unique_ptr<Backend>>& backends, const std::string& report_path);

}  // namespace tilesim::cli
