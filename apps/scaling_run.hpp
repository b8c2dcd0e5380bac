#pragma once
// tilesim run on a workload with a "parallel" section: per backend, the step of one device (a replica's
// batch, each pipeline stage's share of the micro-batches, the largest METIS partition) runs on the
// backend's per-device backend (backends/system_view.hpp), and the system adds what crosses its links:
// the all-reduce of the trained parameters' gradients, the pipeline's schedule (its fill and drain
// bubbles and transfers), the halo exchange. The report gives per backend, under "scaling", the step time
// split into compute, collective, pipeline bubble and halo exchange, the throughput, the scaling
// efficiency against one device, per-device memory and, for pipelines, the bubble share; every number
// labelled simulated, modeled or measured. docs/workload-format.md ("parallel") states what is modelled.
#include <string>
#include <vector>

#include "apps/commands.hpp"
#include "backends/registry.hpp"
#include "workloads/workload.hpp"

namespace tilesim::cli {

// Runs the scaling of `workload` (which has a "parallel" section) on `specs`, writes `report_path` and
// prints the summary (or the report, with --json). Returns the exit code of `tilesim run`.
int run_scaling(const RunArgs& args, const workloads::Workload& workload, const std::vector<backends::BackendSpec>& specs,
                const std::string& report_path);

}  // namespace tilesim::cli
