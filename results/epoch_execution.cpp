#include "results/epoch_execution.hpp"

namespace tilesim {

nlohmann::json EpochExecution::to_json() const {
  return {{"model", model},
          {"how", how},
          {"micro_batches_per_device", micro_batches},
          {"micro_batches_per_step", micro_batches_per_step},
          {"micro_batches_per_host_call", micro_batches_per_host_call},
          {"host_calls_per_epoch", host_calls},
          {"host_call_s", host_call_s},
          {"host_calls_s", host_calls_s},
          {"input_bytes_per_micro_batch", input_bytes_per_micro_batch},
          {"host_link", {{"devices_sharing", devices_per_host_link},
                         {"bytes_per_s_per_device", host_link_bytes_per_s},
                         {"time_per_micro_batch_s", host_link_s_per_micro_batch},
                         {"time_per_step_s", host_link_s_per_micro_batch * static_cast<double>(micro_batches_per_step)},
                         {"overlaps_compute", host_link_overlaps_compute},
                         {"exposed_s", host_link_exposed_s}}},
          {"stream_copy", {{"time_per_micro_batch_s", stream_copy_s_per_micro_batch},
                           {"time_per_step_s", stream_copy_s_per_micro_batch * static_cast<double>(micro_batches_per_step)},
                           {"overlaps_compute", false},
                           {"total_s", stream_copy_s}}},
          {"batch_preparation", {{"time_per_micro_batch_s", batch_preparation_s_per_micro_batch},
                                 {"overlaps_compute", batch_preparation_overlaps_compute},
                                 {"exposed_s", batch_preparation_exposed_s}}},
          {"epoch_fixed_s", epoch_fixed_s},
          {"device_only_epoch_time_s", device_epoch_s},
          {"epoch_time_s", epoch_s},
          {"figures", figures}};
}

}  // namespace tilesim
