#pragma once
// One backend's scaled step of a parallel run (runs/scaling_run.cpp), before it is written out; the
// execution model's pricing of its epoch reads it too (runs/scaling_execution.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/result.hpp"
#include "runs/scaling_steps.hpp"
#include "workloads/loaders/epoch_work.hpp"

namespace tilesim::runs {

// One backend's scaled step, before it is written out.
struct ScaledStep {
  double compute_s = 0, collective_s = 0, bubble_s = 0, halo_s = 0;
  double items_per_step = 0;  // every device's work together, in `unit`
  std::string unit;
  std::string counts;         // what items_per_step counts
  std::optional<workloads::loaders::EpochWork> epoch;  // a loader's epoch, which items_per_step averages
  std::string how;            // what ran on the device and what stands for what
  // One device running the same work without the parallel section (efficiency's baseline).
  std::optional<double> one_device_s, one_device_items;
  std::string one_device_what;
  nlohmann::json allreduce, pipeline, halo;
  nlohmann::json memory = nlohmann::json::array();
  std::vector<DeviceStep> device_steps;
  // What the host feeds one device per step (a replica's A micro-batches, a pipeline's M), with the mean
  // micro-batch's inputs; and the same for the one-device baseline (its micro-batches per step, per
  // optimizer update, and their inputs). An execution model prices them (results/epoch_execution.hpp).
  std::int64_t micro_batches_per_step = 1;
  std::int64_t input_bytes_per_micro_batch = 0;
  double one_device_micro_batches = 1;
  std::int64_t one_device_accumulation = 1;
  std::int64_t one_device_input_bytes = 0;
  bool verified = true;
  ResultKind collective_kind = ResultKind::modeled, bubble_kind = ResultKind::modeled;
};

}  // namespace tilesim::runs
