#pragma once
// A run without a loader or a parallel section: every backend runs the workload's forward pass, or its
// training steps, on the same inputs; each output is verified against the reference and against the
// other backends, and each pair of loss curves compared.
#include <memory>
#include <vector>

#include "results/backend.hpp"
#include "runs/run_request.hpp"
#include "runs/run_result.hpp"

namespace tilesim::runs {

// `backends` are made from request.backends (whose seed and proportion are applied); `steps` is the
// training steps to run, 0 for a forward pass. A backend the workload does not fit is left out and
// listed as refused; when every backend refuses, the first refusal is thrown.
RunResult run_forward(const RunRequest& request, std::vector<std::unique_ptr<Backend>> backends, std::int64_t steps);

}  // namespace tilesim::runs
