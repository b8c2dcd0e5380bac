#pragma once
// A run of a workload on backends, as a library: the one pipeline behind `tilesim run`, the Python
// module's tilesim.run and the published suites' predictions. It checks the request against the
// workload, makes the backends, runs the path the workload asks for (a forward pass or training steps
// on every backend, a loader's batches, a parallel system's step) and returns the result; it writes
// no report and prints nothing but progress on standard error.
//
// Under `mpirun -n K`, every rank runs the same request on the same inputs, and the simulated engine
// spreads a multi-chip machine's functional programs over the ranks (sim/engine.hpp); only the lead
// rank writes traces and speaks.
#include "runs/run_request.hpp"
#include "runs/run_result.hpp"

namespace tilesim::runs {

// Throws InputError for options the workload has no section for (--batches without a loader, --steps
// without training, ...), a backend that cannot run a training step, a trace no backend writes or
// that cannot be written; PlanError when every backend refuses the workload.
RunResult run(RunRequest request);

}  // namespace tilesim::runs
