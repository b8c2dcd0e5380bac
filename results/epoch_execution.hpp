#pragma once
// An epoch as a framework really runs it on a device: the device's steps, plus what driving them from
// the host adds (host calls, the inputs crossing the host link, fixed costs). The run says what its
// epoch is (EpochDriving); a backend family's execution model, each figure from its machine file, says
// what it costs (EpochExecution). A family without one has an epoch of its steps alone.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace tilesim {

// What a run knows of its epoch, one device's view (every replica alike).
struct EpochDriving {
  double device_epoch_s = 0;               // the device's steps over the epoch, summed (all-reduce included)
  double micro_batches = 0;                // one device's micro-batches over the epoch (a share where they do not divide)
  std::int64_t gradient_accumulation = 1;  // micro-batches per step (a pipeline's micro-batches)
  std::int64_t device_iterations = 1;      // steps per host call
  std::int64_t devices_used = 1;           // devices the host feeds at once (replicas x stages)
  std::int64_t input_bytes_per_micro_batch = 0;  // what the host sends for one micro-batch (features, indices, targets)
  double graphs_per_micro_batch = 0;       // a loader of small graphs: the real graphs the host collates per micro-batch; else 0
  bool synthetic_data = false;             // inputs made on the device: nothing crosses the host link
  bool asynchronous_loader = false;        // the loader makes the next batches while the device runs
};

// The epoch as the execution model prices it.
struct EpochExecution {
  std::string model;                       // whose execution model: "PopTorch driving the IPUs from their host"
  double micro_batches = 0;                // per device, over the epoch
  std::int64_t micro_batches_per_host_call = 0;  // per device: device iterations x gradient accumulation
  std::int64_t host_calls = 0;             // per epoch; the last may take fewer micro-batches
  double host_call_s = 0;                  // each
  std::int64_t input_bytes_per_micro_batch = 0;
  std::int64_t devices_per_host_link = 1;  // devices in use behind one host link, sharing it
  double host_link_bytes_per_s = 0;        // one device's share of its host link
  double host_link_s_per_micro_batch = 0;  // one micro-batch's inputs over that share
  std::int64_t micro_batches_per_step = 1;
  bool host_link_overlaps_compute = false; // the transfer runs while the device computes
  double host_link_exposed_s = 0;          // over the epoch: the host-link time the device waits for
  double stream_copy_s_per_micro_batch = 0;  // the device reading a staged micro-batch into its tiles (never overlapped)
  double stream_copy_s = 0;                // over the epoch
  double host_calls_s = 0;                 // host_calls x host_call_s
  // The host making each micro-batch (a graph loader's collation), where the model prices it.
  double batch_preparation_s_per_micro_batch = 0;
  bool batch_preparation_overlaps_compute = false;  // a loader worker makes the next batch while the device runs
  double batch_preparation_exposed_s = 0;  // over the epoch: the preparation the device waits for
  double epoch_fixed_s = 0;
  double device_epoch_s = 0;               // the device's steps alone (the epoch time before this model)
  // device_epoch_s + host_calls_s + host_link_exposed_s + stream_copy_s + batch_preparation_exposed_s + epoch_fixed_s
  double epoch_s = 0;
  std::string how;                         // the model in words, for the report
  nlohmann::json figures = nlohmann::json::object();  // the machine figures used, with their sources

  // report.json's "execution" object.
  nlohmann::json to_json() const;
};

}  // namespace tilesim
