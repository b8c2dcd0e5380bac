#include "runs/sweep/workload_point_run.hpp"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "backends/registry.hpp"
#include "common/error.hpp"
#include "runs/minibatch_run.hpp"
#include "runs/run.hpp"
#include "workloads/graphs/graph.hpp"
#include "workloads/loaders/loader_knob.hpp"

namespace tilesim::runs::sweep {

namespace {

namespace loaders = workloads::loaders;

// What a loader source is built from: two points that agree here share one graph (BatchSource's
// derived constructor requires the same kind, parts, dataset and seed).
std::string loader_source_key(const workloads::Workload& w) {
  const loaders::LoaderSpec& l = *w.model->loader;
  nlohmann::json key = {{"seed", w.seed}, {"kind", loaders::to_string(l.kind)}, {"num_parts", l.num_parts}};
  if (l.dataset) key["dataset"] = loaders::to_json(l)["dataset"];
  else key["graph"] = workloads::graphs::to_json(w.model->graph);
  return key.dump();
}

// The verified cell: yes or no where the backend computed outputs and they were checked; else what the
// family writes for a row it did not check (a model: "modeled"; the IPU timing-only: "timing-only").
std::string point_verified_cell(const backends::BackendSpec& s, bool timing_only, bool verified) {
  const auto& info = s.descriptor->info();
  if (!info.reads_input_values || (timing_only && info.timing_only_applies)) return info.unchecked_verified;
  return verified ? "yes" : "no";
}

runs::RunRequest workload_point_request(const workloads::Workload& w, const backends::BackendSpec& s, const WorkloadPointOptions& o) {
  runs::RunRequest run;
  run.workload = w;
  run.workload_file = w.source_file;
  run.backends = {s};
  run.backends_text = s.name();
  run.progress = false;
  run.timing_only = o.timing_only;
  run.warmup = o.warmup;
  run.repeats = o.repeats;
  return run;
}

// The last loss that is a number (a model computes none), or "".
std::string final_loss_cell(const nlohmann::json& losses) {
  if (!losses.is_array()) return "";
  for (auto it = losses.rbegin(); it != losses.rend(); ++it)
    if (it->is_number()) return sweep_number(it->get<double>());
  return "";
}

// The busiest tile over the run's ops (simulated backends), or "".
std::string peak_tile_cell(const BackendResult& r) {
  std::optional<std::int64_t> peak;
  for (const OpResult& op : r.ops)
    if (op.peak_tile_bytes) peak = std::max(peak.value_or(0), *op.peak_tile_bytes);
  return peak ? std::to_string(*peak) : "";
}

// A loader's batches: the batch-size sweep's columns, as that sweep always wrote them.
void minibatch_point_cells(const MiniBatchOutcome& out, const backends::BackendSpec& s, const runs::RunRequest& run, PointOutcome& o) {
  const nlohmann::json& m = out.report["results"][0]["minibatch"];
  const nlohmann::json& loader = out.report["loader"];
  SweepCells& c = o.cells;
  const double per_batch = loader["sampling_s"]["total"].get<double>() / m["batches"].get<double>();
  c["batches"] = m["batches"].dump();
  c["batches_per_epoch"] = loader["batches_per_epoch"].dump();
  c["step_min_s"] = sweep_number(m["step_time_s"]["min"].get<double>());
  c["step_median_s"] = sweep_number(m["step_time_s"]["median"].get<double>());
  c["step_max_s"] = sweep_number(m["step_time_s"]["max"].get<double>());
  c["total_time_s"] = sweep_number(m["step_time_s"]["total"].get<double>());
  c["epoch_time_s"] = sweep_number(m["epoch_time_s"].get<double>());
  c["throughput_unit"] = m["throughput"]["unit"].get<std::string>();
  c["throughput_per_s"] = sweep_number(m["throughput"]["value"].get<double>());
  c["nodes_per_s"] = sweep_number(m["throughput"]["nodes_per_s"].get<double>());
  c["edges_per_s"] = sweep_number(m["throughput"]["edges_per_s"].get<double>());
  c["node_padding_share"] = sweep_number(m["padding"]["node_share"].get<double>());
  c["edge_padding_share"] = sweep_number(m["padding"]["edge_share"].get<double>());
  c["host_sampling_s_per_batch"] = sweep_number(per_batch);
  c["bound"] = m["host_vs_device"]["bound"].get<std::string>();
  if (m.contains("peak_tile_bytes")) c["peak_tile_bytes"] = std::to_string(m["peak_tile_bytes"]["bytes"].get<std::int64_t>());
  if (m.contains("loss")) c["final_loss"] = final_loss_cell(m["loss"]);
  c["verified"] = point_verified_cell(s, run.timing_only, m["all_batches_verified"].get<bool>());
  o.failed_verification = !out.all_verified && c["verified"] == "no";
}

// A forward pass (one step) or training steps on a fixed graph.
void whole_graph_point_cells(const RunResult& result, const backends::BackendSpec& s, const runs::RunRequest& run, PointOutcome& o) {
  const BackendResult& r = result.results.front();
  SweepCells& c = o.cells;
  const nlohmann::json& entry = result.report["results"][0];
  if (entry.contains("training")) {
    const nlohmann::json& t = entry["training"];
    double lo = 0, hi = 0, total = 0;
    for (std::size_t k = 0; k < t["per_step"].size(); ++k) {
      const double step = t["per_step"][k]["time_s"].get<double>();
      lo = k == 0 ? step : std::min(lo, step);
      hi = std::max(hi, step);
      total += step;
    }
    c["run"] = "training";
    c["steps"] = t["steps"].dump();
    c["step_min_s"] = sweep_number(lo);
    c["step_median_s"] = sweep_number(t["median_step_time_s"].get<double>());
    c["step_max_s"] = sweep_number(hi);
    c["total_time_s"] = sweep_number(total);
    c["final_loss"] = final_loss_cell(t["loss"]);
  } else {
    // A forward pass is one step: its time is every step figure.
    c["run"] = "forward";
    for (const char* column : {"step_min_s", "step_median_s", "step_max_s", "total_time_s"}) c[column] = sweep_number(r.time_s);
  }
  if (r.cycles) c["cycles"] = std::to_string(*r.cycles);
  c["peak_tile_bytes"] = peak_tile_cell(r);
  c["verified"] = point_verified_cell(s, run.timing_only, result.all_verified);
  o.failed_verification = c["verified"] == "no";
}

// A parallel step: the system's step time and its split, throughput and scaling efficiency.
void parallel_point_cells(const RunResult& result, const backends::BackendSpec& s, const runs::RunRequest& run, PointOutcome& o) {
  const nlohmann::json& sc = result.report["scaling"][0];
  SweepCells& c = o.cells;
  c["run"] = "parallel";
  c["devices"] = sc["devices_used"].dump();
  c["step_median_s"] = sweep_number(sc["step"]["time_s"].get<double>());
  c["total_time_s"] = c["step_median_s"];
  c["compute_s"] = sweep_number(sc["step"]["compute_s"].get<double>());
  c["collective_s"] = sweep_number(sc["step"]["collective_s"].get<double>());
  c["bubble_s"] = sweep_number(sc["step"]["bubble_s"].get<double>());
  c["halo_exchange_s"] = sweep_number(sc["step"]["halo_exchange_s"].get<double>());
  c["throughput_unit"] = sc["throughput"]["unit"].get<std::string>();
  c["throughput_per_s"] = sweep_number(sc["throughput"]["value"].get<double>());
  if (sc["scaling_efficiency"].is_number()) c["scaling_efficiency"] = sweep_number(sc["scaling_efficiency"].get<double>());
  const BackendResult& device = result.results.front();
  if (device.cycles) c["cycles"] = std::to_string(*device.cycles);
  c["peak_tile_bytes"] = peak_tile_cell(device);
  c["verified"] = point_verified_cell(s, run.timing_only, result.all_verified);
  o.failed_verification = c["verified"] == "no";
}

void mark_does_not_fit(PointOutcome& o, const PlanError& e) {
  o.does_not_fit = true;
  o.cells["verified"] = "does-not-fit";
  o.message = e.what();
}

}  // namespace

std::string sweep_number(double v) {
  std::ostringstream s;
  s << std::setprecision(9) << v;
  return s.str();
}

std::unique_ptr<loaders::BatchSource> LoaderSources::source_for(const workloads::Workload& workload) {
  const std::string key = loader_source_key(workload);
  if (!base_ || key != key_) {
    base_.reset();
    std::cerr << "tilesim: building the loader's graph ..." << std::endl;
    base_ = std::make_unique<loaders::BatchSource>(workload);
    key_ = key;
  }
  return std::make_unique<loaders::BatchSource>(*base_, workload);
}

PointOutcome run_workload_point(const workloads::WorkloadPoint& point, const backends::BackendSpec& backend,
                                const WorkloadPointOptions& options, LoaderSources& sources) {
  const workloads::Workload& w = point.workload;
  PointOutcome out;
  const bool loader = w.model && w.model->loader;
  if (loader) {
    const loaders::BatchKnob knob = loaders::batch_knob(*w.model->loader);
    out.cells["knob"] = knob.name;
    out.cells["batch_size"] = std::to_string(knob.value);
  }
  runs::RunRequest run = workload_point_request(w, backend, options);
  // A parallel step goes the way `tilesim run` sends it, with its loader's own batches.
  if (loader && !w.parallel) {
    out.cells["run"] = "minibatch";
    run.batches = options.batches;
    const auto source = sources.source_for(w);
    std::vector<std::unique_ptr<Backend>> one;
    one.push_back(backends::make_backend(backend));
    try {
      minibatch_point_cells(runs::run_batches(run, one, *source), backend, run, out);
    } catch (const PlanError& e) {
      mark_does_not_fit(out, e);
    }
    return out;
  }
  out.cells["run"] = w.parallel ? "parallel" : (w.model && w.model->train ? "training" : "forward");
  try {
    const RunResult result = runs::run(run);
    if (w.parallel) parallel_point_cells(result, backend, run, out);
    else whole_graph_point_cells(result, backend, run, out);
  } catch (const PlanError& e) {
    mark_does_not_fit(out, e);
  }
  return out;
}

}  // namespace tilesim::runs::sweep
