#pragma once
// Scaling figures from the report.json files of workloads with a "parallel" section (runs/scaling_run):
// throughput versus the number of chips (devices) used, one line per system; and for pipelines, the step
// time versus the number of micro-batches, one line per system. Each line says what its numbers are
// (simulated, modeled). Answers how a system scales out, and what micro-batching a pipeline buys.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/gnuplot.hpp"

namespace tilesim::analysis {

// One backend's entry of one report's "scaling".
struct ScalingPoint {
  std::string report;       // the file it came from
  std::string workload;     // the workload's name
  std::string series;       // the workload's name without a last "_<letters><digits>" part (schnet_r16 -> schnet)
  std::string backend;      // "ipu:pod16"
  std::string kind;         // the compute's kind ("simulated", "modeled")
  std::int64_t devices = 0;
  std::int64_t replicas = 1, stages = 1, micro_batches = 1, partitions = 1;
  std::string schedule;     // pipelines: "gpipe" or "1f1b"; else ""
  std::string unit;         // "graphs_per_s", ...
  double throughput_per_s = 0;
  double step_time_s = 0;
  double efficiency = -1;   // -1 where the report has none (one device's step not known)
  double bubble_share = -1; // pipelines only
};

// Reads every entry of every report's "scaling". Throws InputError naming the file and JSON path for a
// file that is not JSON, a report without "scaling" (a workload without "parallel") or a malformed entry.
std::vector<ScalingPoint> read_scaling_reports(const std::vector<std::string>& paths);

// A workload name without its last "_<letters><digits>" part, which names the point of a series
// ("schnet_qm9_r16" -> "schnet_qm9", "gcn_m8" -> "gcn"); the name itself when it has none.
std::string series_of(const std::string& workload_name);

// Throughput versus devices used, log-log, one line per (series, backend) through the points without a
// pipeline (stem "scaling_throughput"). Throws InputError when there are none.
GnuplotFigure scaling_throughput_figure(const std::vector<ScalingPoint>& points);

// Step time versus micro-batches, one line per (series, backend, stages, schedule) through the pipeline
// points (stem "scaling_pipeline"). Throws InputError when there are none.
GnuplotFigure pipeline_step_figure(const std::vector<ScalingPoint>& points);

}  // namespace tilesim::analysis
