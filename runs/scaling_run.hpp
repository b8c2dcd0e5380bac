#pragma once
// A run of a workload with a "parallel" section: per backend, the step of one device (a replica's
// batch, each pipeline stage's share of the micro-batches, the largest METIS partition) runs on the
// backend's per-device backend (backends/system_view.hpp), and the system adds what crosses its links:
// the all-reduce of the trained parameters' gradients, the pipeline's schedule (its fill and drain
// bubbles and transfers), the halo exchange. The report gives per backend, under "scaling", the step time
// split into compute, collective, pipeline bubble and halo exchange, the throughput, the scaling
// efficiency against one device, per-device memory and, for pipelines, the bubble share; every number
// labelled simulated, modeled or measured. docs/workload-format.md ("parallel") states what is modelled.
#include <string>
#include <vector>

#include "runs/run_request.hpp"
#include "runs/run_result.hpp"

namespace tilesim::runs {

// Runs the scaling of request.workload (which has a "parallel" section) on request.backends, each made
// as a system of devices here.
RunResult run_scaling(const RunRequest& request);

}  // namespace tilesim::runs
