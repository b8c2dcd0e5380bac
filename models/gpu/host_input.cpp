#include "models/gpu/host_input.hpp"

#include <algorithm>

namespace tilesim::gpu {

EpochExecution eager_epoch(const GpuMachine& machine, const EpochDriving& run) {
  EpochExecution e;
  e.model = "eager PyTorch driving the GPU from its host";
  e.micro_batches = run.micro_batches;
  e.micro_batches_per_step = std::max<std::int64_t>(run.gradient_accumulation, 1);
  // Every step is a call from Python: the eager step times already carry the host's calls.
  e.micro_batches_per_host_call = 1;
  e.device_epoch_s = run.device_epoch_s;

  const bool collates = machine.host_input && run.graphs_per_micro_batch > 0 && !run.synthetic_data;
  const double compute_per_micro_batch = run.micro_batches > 0 ? run.device_epoch_s / run.micro_batches : 0.0;
  if (collates) {
    const GpuMachine::HostInput& input = *machine.host_input;
    e.batch_preparation_s_per_micro_batch = input.collate_per_batch_s + run.graphs_per_micro_batch * input.collate_per_graph_s;
    e.batch_preparation_overlaps_compute = run.asynchronous_loader;
    const double exposed = e.batch_preparation_overlaps_compute
                               ? std::max(0.0, e.batch_preparation_s_per_micro_batch - compute_per_micro_batch)
                               : e.batch_preparation_s_per_micro_batch;
    e.batch_preparation_exposed_s = exposed * run.micro_batches;

    // Batch.to(device): one ATen copy call per tensor, and the bytes over PCIe before it returns.
    e.input_bytes_per_micro_batch = run.input_bytes_per_micro_batch;
    e.devices_per_host_link = 1;
    e.host_link_bytes_per_s = machine.pcie_bytes_per_s;
    e.host_link_s_per_micro_batch = static_cast<double>(input.tensors_per_batch) * machine.eager.aten_call_s +
                                    (machine.pcie_bytes_per_s > 0 ? static_cast<double>(e.input_bytes_per_micro_batch) /
                                                                        machine.pcie_bytes_per_s
                                                                  : 0.0);
    e.host_link_overlaps_compute = false;
    e.host_link_exposed_s = e.host_link_s_per_micro_batch * run.micro_batches;
  }
  e.epoch_s = e.device_epoch_s + e.host_link_exposed_s + e.batch_preparation_exposed_s;

  if (!machine.host_input) {
    e.how = "epoch = the device's steps: the machine file has no \"host_input\" section, so the host's batch "
            "preparation and input copies are not priced";
  } else if (!collates) {
    e.how = std::string("epoch = the device's steps: ") +
            (run.synthetic_data ? "synthetic data (the inputs are made on the device)"
                                : "this loader's batches are not collated from small graphs, and its host sampling is "
                                  "tilesim's own, measured and reported beside (host_vs_device), not priced here");
  } else {
    e.how = "epoch = the device's steps + per micro-batch the host's collation of its graphs (PyG's DataLoader: "
            "collate_per_batch_s + graphs x collate_per_graph_s) " +
            std::string(e.batch_preparation_overlaps_compute
                            ? "where it is longer than a step (asynchronous: a loader worker makes the next batch while "
                              "the GPU runs this one)"
                            : "between the steps (synchronous: num_workers 0, in the training loop's thread)") +
            " + Batch.to(device): tensors_per_batch ATen copy calls (aten_call each) and the batch's bytes over PCIe "
            "(pageable memory: the call returns when the copy is done). Each eager step is already max(host, device); "
            "a device-bound step would hide part of a synchronous collation behind its kernels, which this model "
            "does not take";
  }
  return e;
}

}  // namespace tilesim::gpu
