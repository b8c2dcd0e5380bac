#pragma once
// `tilesim sweep` on a workload sweep file (docs/sweep-format.md, "Workload sweeps"): a base workload
// and axes over its fields, every point on every backend, one results.csv row each. A batch-size sweep
// ("batch_sizes") is one with a single axis over the loader's batch size.
#include <nlohmann/json.hpp>

#include "runs/sweep/sweep_request.hpp"

namespace tilesim::runs::sweep {

// Whether a sweep document is a workload sweep (it names a "workload") rather than an op sweep.
bool is_workload_sweep(const nlohmann::json& document);

// Runs it. Every point is read by the workload reader, and checked against every backend, before the
// first runs. Returns the exit code: 0, or 1 when an output failed verification.
int workload_sweep_command(const SweepRequest& args, const nlohmann::json& document);

}  // namespace tilesim::runs::sweep
