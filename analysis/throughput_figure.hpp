#pragma once
// Throughput versus batch size (a batch-size or workload sweep's results.csv, runs/sweep/workload_sweep.cpp):
// one line per backend (and per value of the sweep's other axes) on log-log axes, each labelled with
// what its numbers are (simulated, measured, modeled). Answers how much each machine loses at small
// batches.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/gnuplot.hpp"

namespace tilesim::analysis {

struct ThroughputRow {
  std::string workload, knob, backend, kind, unit, status;
  std::int64_t batch_size = 0;
  double throughput_per_s = 0;
  double edge_padding_share = 0;
  std::string bound;
  // The line the row belongs to: its backend, then each other axis of a workload sweep as
  // " PATH=VALUE" (the batch knob's axis is the x axis, not a line); "" reads as the backend.
  std::string series;
};

// Reads a batch-size or workload sweep's results.csv by column name (results/workload_sweep_columns.hpp);
// rows of points without a loader (no batch size) are left out. Throws InputError naming the file and
// line for a header without the columns read, a malformed row, or no row with a batch size.
std::vector<ThroughputRow> read_throughput_csv(const std::string& path);

// The figure (stem "throughput_<workload>"): one line per series through its rows that ran (status
// "ok"), x the batch size, y the throughput; a backend's sizes that did not fit are listed in the key.
GnuplotFigure throughput_figure(const std::vector<ThroughputRow>& rows);

}  // namespace tilesim::analysis
