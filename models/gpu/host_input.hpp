#pragma once
// An epoch as eager PyTorch drives a GPU from its host (results/epoch_execution.hpp): the device's steps
// (each already max(host, device) in eager mode), plus what handing each mini-batch over adds. PyG's
// DataLoader collates a batch of small graphs in the training loop's thread (num_workers 0: the
// published scripts' default), then Batch.to(device) copies each of its tensors from pageable host
// memory, which returns only once the copy is done. Pure: the figures come from the machine file's
// "host_input" section and its eager host floors.
#include "models/gpu/gpu_machine.hpp"
#include "results/epoch_execution.hpp"

namespace tilesim::gpu {

// epoch = the device's steps + per micro-batch (the collation the GPU waits for + the input copy).
// Synchronous loader: the collation runs between steps. Asynchronous (a worker process): it hides
// behind a step and shows only where it is longer. The copy is never hidden (pageable memory). Without
// a "host_input" section, or for a loader that does not collate graphs, nothing is added for them.
EpochExecution eager_epoch(const GpuMachine& machine, const EpochDriving& run);

}  // namespace tilesim::gpu
