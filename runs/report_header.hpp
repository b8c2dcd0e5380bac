#pragma once
// The head every report.json of `tilesim run` starts with, whichever path ran: the tool, when, the
// resolved workload and the options the run used.
#include <nlohmann/json.hpp>

#include "runs/run_request.hpp"

namespace tilesim::runs {

// {"tool", "created_utc", "workload", "options": {"backends", "timing_only", "warmup", "repeats"}}; a
// path adds its own options (steps, batches, ...) to "options" after it.
nlohmann::json report_header(const RunRequest& request);

}  // namespace tilesim::runs
