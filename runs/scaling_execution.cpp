#include "runs/scaling_execution.hpp"

#include "backends/backend_family.hpp"
#include "runs/epoch_driving.hpp"
#include "runs/result_tables.hpp"

namespace tilesim::runs {

std::optional<PricedEpochs> priced_epochs(const backends::BackendSpec& spec, const workloads::Workload& workload, const ScaledStep& s,
                                          double step_s, std::int64_t used) {
  const backends::EpochExecutionModel model = spec.descriptor->epoch_execution_model(spec);
  if (!model || s.items_per_step <= 0) return std::nullopt;
  PricedEpochs p;
  // A loader of small graphs: each micro-batch is one of its batches, whose graphs the host collates.
  const double graphs_per_batch = s.epoch && s.epoch->unit == "graphs" ? s.epoch->items_per_batch() : 0.0;
  p.items = s.epoch ? static_cast<double>(s.epoch->items) : s.items_per_step;
  p.steps = p.items / s.items_per_step;
  EpochDriving run = loader_driving(workload);
  run.device_epoch_s = p.steps * step_s;
  run.micro_batches = p.steps * static_cast<double>(s.micro_batches_per_step);
  run.gradient_accumulation = s.micro_batches_per_step;
  run.devices_used = used;
  run.input_bytes_per_micro_batch = s.input_bytes_per_micro_batch;
  run.graphs_per_micro_batch = graphs_per_batch;
  p.used = model(run);
  if (s.one_device_s && s.one_device_items && *s.one_device_items > 0) {
    const double one_steps = p.items / *s.one_device_items;
    EpochDriving one = loader_driving(workload);
    one.device_epoch_s = one_steps * *s.one_device_s;
    one.micro_batches = one_steps * s.one_device_micro_batches;
    one.gradient_accumulation = s.one_device_accumulation;
    one.devices_used = 1;
    one.input_bytes_per_micro_batch = s.one_device_input_bytes;
    one.graphs_per_micro_batch = graphs_per_batch;
    p.one_device = model(one);
  }
  return p;
}

void write_execution_note(std::ostream& notes, const PricedEpochs& p) {
  const EpochExecution& e = p.used;
  notes << "  execution (" << e.model << "): " << e.host_calls << " host calls of " << e.micro_batches_per_host_call
        << " micro-batches per device, host I/O " << format_time(e.host_link_exposed_s + e.stream_copy_s)
        << (e.batch_preparation_exposed_s > 0 ? ", batch preparation " + format_time(e.batch_preparation_exposed_s) : std::string())
        << ", epoch "
        << format_time(e.epoch_s) << " (the steps alone " << format_time(e.device_epoch_s) << ")\n";
}

ScalingRates scaling_rates(const ScaledStep& s, double step_s, std::int64_t used, const std::optional<PricedEpochs>& priced) {
  ScalingRates r;
  // The device's steps alone; with an execution model the epoch adds the host's calls and transfers.
  r.device_throughput = step_s > 0 ? s.items_per_step / step_s : 0;
  if (s.one_device_s && *s.one_device_s > 0) {
    r.device_one_device = *s.one_device_items / *s.one_device_s;
    r.device_efficiency = r.device_throughput / (static_cast<double>(used) * *r.device_one_device);
  }
  r.throughput = priced ? priced->throughput() : r.device_throughput;
  r.one_device = r.device_one_device;
  r.efficiency = r.device_efficiency;
  if (priced && priced->one_device && priced->one_device->epoch_s > 0) {
    r.one_device = priced->items / priced->one_device->epoch_s;
    r.efficiency = r.throughput / (static_cast<double>(used) * *r.one_device);
  }
  return r;
}

void add_execution_fields(nlohmann::json& entry, const PricedEpochs& priced, const ScalingRates& rates) {
  const auto optional = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  // What the execution model adds, beside the figures of the device's steps alone.
  entry["execution"] = priced.used.to_json();
  entry["execution"]["steps_per_epoch"] = priced.steps;
  entry["execution"]["epoch_items"] = priced.items;
  entry["throughput"]["counts"] = entry["throughput"]["counts"].get<std::string>() +
                                  "; value: the epoch's items over the execution model's epoch time (execution.epoch_time_s)";
  entry["throughput"]["device_only_value"] = rates.device_throughput;
  entry["one_device"]["device_only_throughput"] = optional(rates.device_one_device);
  if (priced.one_device) entry["one_device"]["execution_epoch_time_s"] = priced.one_device->epoch_s;
  entry["device_only_scaling_efficiency"] = optional(rates.device_efficiency);
}

}  // namespace tilesim::runs
