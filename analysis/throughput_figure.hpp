#pragma once
// Throughput versus batch size (a batch-size sweep's results.csv, runs/sweep/loader_sweep.cpp): one line
// per backend on log-log axes, each labelled with what its numbers are (simulated, measured, modeled).
// Answers how much each machine loses at small batches.
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
};

// Reads a batch-size sweep's results.csv. Throws InputError naming the file and line for a header that
// is not the batch-size sweep's or a malformed row.
std::vector<ThroughputRow> read_throughput_csv(const std::string& path);

// The figure (stem "throughput_<workload>"): one line per backend through its rows that ran (status
// "ok"), x the batch size, y the throughput; a backend's sizes that did not fit are listed in the key.
GnuplotFigure throughput_figure(const std::vector<ThroughputRow>& rows);

}  // namespace tilesim::analysis
