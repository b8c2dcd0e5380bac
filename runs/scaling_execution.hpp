#pragma once
// A parallel run's epoch as the backend's execution model prices it (results/epoch_execution.hpp):
// for the devices used and the one-device baseline, the throughput and scaling efficiency it gives
// beside the device's steps alone, and what report.json and the notes say of it.
#include <cstdint>
#include <optional>
#include <ostream>

#include <nlohmann/json.hpp>

#include "backends/backend_spec.hpp"
#include "results/epoch_execution.hpp"
#include "runs/scaled_step.hpp"
#include "workloads/workload.hpp"

namespace tilesim::runs {

// The epoch as the execution model prices it: a loader's epoch (R x A batches to a step), or one step of
// the whole graph. Its throughput is the epoch's items over that epoch time.
struct PricedEpochs {
  double items = 0;  // the epoch's items
  double steps = 1;  // steps per epoch (a share of one where the batches do not divide)
  EpochExecution used;
  std::optional<EpochExecution> one_device;
  double throughput() const { return used.epoch_s > 0 ? items / used.epoch_s : 0; }
};

// nullopt for a family without an execution model (BackendFamily::epoch_execution_model).
std::optional<PricedEpochs> priced_epochs(const backends::BackendSpec& spec, const workloads::Workload& workload, const ScaledStep& s,
                                          double step_s, std::int64_t used);

// The rates of the devices' steps alone, and those the report gives (the execution model's when there is one).
struct ScalingRates {
  double device_throughput = 0;
  std::optional<double> device_one_device, device_efficiency;
  double throughput = 0;
  std::optional<double> one_device, efficiency;
};
ScalingRates scaling_rates(const ScaledStep& s, double step_s, std::int64_t used, const std::optional<PricedEpochs>& priced);

// report.json's "execution" and the device-only figures beside the modeled epoch's.
void add_execution_fields(nlohmann::json& entry, const PricedEpochs& priced, const ScalingRates& rates);

// The line under a backend's notes that says what the execution model added.
void write_execution_note(std::ostream& notes, const PricedEpochs& p);

}  // namespace tilesim::runs
