#pragma once
// What a run tells a backend's execution model about its epoch (results/epoch_execution.hpp): the
// workload's framework options, from its loader. The loader and scaling runs add the epoch's own terms
// (steps, micro-batches, devices, input bytes) before asking the backend's family for the cost.
#include "results/epoch_execution.hpp"
#include "workloads/workload.hpp"

namespace tilesim::runs {

// The loader's device iterations, synthetic data and asynchronous loading; without a loader, the
// framework's defaults (one step per host call, inputs from the host, a synchronous loader).
EpochDriving loader_driving(const workloads::Workload& workload);

}  // namespace tilesim::runs
