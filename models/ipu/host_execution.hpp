#pragma once
// PopTorch driving IPUs from their host, as an epoch's execution model (docs/workload-format.md, "How
// the framework drives the device"). One host call (a PopTorch model(...) call) runs device_iterations
// steps of gradient_accumulation micro-batches on every replica and then returns to the host, paying a
// fixed cost. Each micro-batch's inputs cross the host link, whose bandwidth the IPUs in use behind it
// share, and are then read from where they were staged into the tiles (the StreamCopyMid phase, which
// blocks compute: PopTorch overlaps it only with I/O tiles, which tilesim does not model). With an
// asynchronous loader the next micro-batches are ready while the IPU computes, so Poplar's prefetch moves
// them over the host link meanwhile and the IPU waits only for what the link cannot hide; with a
// synchronous one the link transfer is serial. Synthetic data sends nothing. Pure: the figures come from
// the machine file's "host" section, the epoch from the run.
#include "models/ipu/machine/machine_file.hpp"
#include "results/epoch_execution.hpp"

namespace tilesim::ipu {

EpochExecution poptorch_epoch(const HostFigures& host, const EpochDriving& run);

}  // namespace tilesim::ipu
