#pragma once
// Batch-size sweeps of a mini-batch workload (docs/sweep-format.md, "Batch-size sweeps").
#include <nlohmann/json.hpp>

#include "runs/sweep/sweep_request.hpp"

namespace tilesim::runs::sweep {

// Whether a sweep document is a batch-size sweep (it names a "workload") rather than an op sweep.
bool is_loader_sweep(const nlohmann::json& document);

// Runs it: `tilesim sweep` with a batch-size sweep file. Returns the exit code.
int loader_sweep_command(const SweepRequest& args, const nlohmann::json& document);

}  // namespace tilesim::runs::sweep
