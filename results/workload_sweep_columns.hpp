#pragma once
// The columns of a workload sweep's results.csv (docs/sweep-format.md, "Workload sweeps"): the
// writer (runs/sweep/workload_sweep.cpp) and the readers (analysis/throughput_figure.cpp, `tilesim
// plot throughput`) share them here, so that a reader tells the sweep's axis columns (one per axis,
// named by its JSON path) from the fixed ones without knowing the sweep.
//
// A row is: the leading columns, then one column per axis (in the sweep's axis order), then `status`.
// The first 21 are the batch-size sweep's columns in their old order and `status` stays last, so files
// and scripts written for batch-size sweeps read the same cells where they did.
#include <string>
#include <vector>

namespace tilesim {

inline const std::vector<std::string>& workload_sweep_leading_columns() {
  static const std::vector<std::string> columns = {
      // The batch-size sweep's columns.
      "workload", "knob", "batch_size", "backend", "kind", "batches", "batches_per_epoch", "step_min_s", "step_median_s",
      "step_max_s", "epoch_time_s", "throughput_unit", "throughput_per_s", "nodes_per_s", "edges_per_s", "node_padding_share",
      "edge_padding_share", "host_sampling_s_per_batch", "bound", "peak_tile_bytes", "verified",
      // Added by workload sweeps: the point, how it ran, and the figures of runs without a loader.
      "point", "run", "steps", "total_time_s", "cycles", "final_loss", "devices", "compute_s", "collective_s", "bubble_s",
      "halo_exchange_s", "scaling_efficiency", "machine_hash", "wall_s"};
  return columns;
}

inline const std::string& workload_sweep_status_column() {
  static const std::string status = "status";
  return status;
}

}  // namespace tilesim
