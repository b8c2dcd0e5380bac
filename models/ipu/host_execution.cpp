#include "models/ipu/host_execution.hpp"

#include <algorithm>
#include <cmath>

namespace tilesim::ipu {

namespace {

// A count of micro-batches that should be whole but arrives as a quotient of doubles (an epoch's batches
// over the replicas) rounds up to the next call only past this much.
constexpr double kWholeTolerance = 1e-9;

std::int64_t calls_for(double micro_batches, std::int64_t per_call) {
  if (micro_batches <= 0) return 0;
  return static_cast<std::int64_t>(std::ceil(micro_batches / static_cast<double>(per_call) - kWholeTolerance));
}

}  // namespace

EpochExecution poptorch_epoch(const HostFigures& host, const EpochDriving& run) {
  EpochExecution e;
  e.model = "PopTorch driving the IPUs from their host";
  e.micro_batches = run.micro_batches;
  e.micro_batches_per_step = std::max<std::int64_t>(run.gradient_accumulation, 1);
  e.micro_batches_per_host_call = std::max<std::int64_t>(run.device_iterations, 1) * e.micro_batches_per_step;
  e.host_calls = calls_for(run.micro_batches, e.micro_batches_per_host_call);
  e.host_call_s = host.host_call_s;
  e.host_calls_s = static_cast<double>(e.host_calls) * host.host_call_s;

  // PopTorch's synthetic data keeps the inputs on the device: nothing crosses the host link.
  e.input_bytes_per_micro_batch = run.synthetic_data ? 0 : run.input_bytes_per_micro_batch;
  const auto bytes = static_cast<double>(e.input_bytes_per_micro_batch);
  // The IPUs in use behind one link share it; an IPU alone on its link has all of it.
  e.devices_per_host_link = std::clamp<std::int64_t>(run.devices_used, 1, host.ipus_per_host_link);
  e.host_link_bytes_per_s = host.host_link_bytes_per_s / static_cast<double>(e.devices_per_host_link);
  e.host_link_s_per_micro_batch = bytes > 0 ? bytes / e.host_link_bytes_per_s : 0.0;
  e.stream_copy_s_per_micro_batch = bytes > 0 ? bytes / host.stream_copy_bytes_per_s : 0.0;

  // Overlapped, the link carries the next micro-batch while the IPU computes and reads this one: the IPU
  // waits only where the link is the slower of the two.
  e.host_link_overlaps_compute = run.asynchronous_loader;
  const double compute_per_micro_batch = run.micro_batches > 0 ? run.device_epoch_s / run.micro_batches : 0.0;
  const double exposed_per_micro_batch =
      e.host_link_overlaps_compute
          ? std::max(0.0, e.host_link_s_per_micro_batch - (compute_per_micro_batch + e.stream_copy_s_per_micro_batch))
          : e.host_link_s_per_micro_batch;
  e.host_link_exposed_s = exposed_per_micro_batch * run.micro_batches;
  e.stream_copy_s = e.stream_copy_s_per_micro_batch * run.micro_batches;

  e.epoch_fixed_s = host.epoch_fixed_s;
  e.device_epoch_s = run.device_epoch_s;
  e.epoch_s = e.device_epoch_s + e.host_calls_s + e.host_link_exposed_s + e.stream_copy_s + e.epoch_fixed_s;
  e.how = "epoch = the device's steps + host calls x host_call_s + the host-link time the IPU waits for + the "
          "stream copies into the tiles + epoch_fixed_s. A host call (PopTorch's model(...)) runs device_iterations x "
          "gradient_accumulation micro-batches on every replica; each micro-batch's inputs cross the host link, "
          "shared by the IPUs in use behind it, " +
          std::string(e.host_link_overlaps_compute
                          ? "while the IPU computes (asynchronous loader and Poplar's prefetch: the IPU waits only where "
                            "the link is slower than a micro-batch's compute)"
                          : "serially (synchronous loader: each call's batches are handed over when it starts)") +
          ", then are copied into the tiles (StreamCopyMid, not overlapped: that needs I/O tiles, not modelled)" +
          (run.synthetic_data ? "; synthetic data: no inputs cross the link" : "");
  return e;
}

}  // namespace tilesim::ipu
