#include "runs/minibatch_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "common/error.hpp"
#include "common/wall_clock.hpp"
#include "mpi/world.hpp"
#include "runs/agreement.hpp"
#include "runs/epoch_driving.hpp"
#include "runs/report_header.hpp"
#include "runs/result_tables.hpp"
#include "runs/training_run.hpp"
#include "workloads/loaders/batch_lowering.hpp"
#include "workloads/loaders/batch_source.hpp"
#include "workloads/loaders/epoch_work.hpp"

namespace tilesim::runs {

namespace {

using Clock = std::chrono::steady_clock;
namespace loaders = workloads::loaders;

// The trained parameters, optimizer state and step number of one backend, by tensor name, carried from
// one batch's step to the next (each batch is its own op graph, so tensor ids may differ; names do not).
class CarriedState {
 public:
  void apply(const OpGraph& graph, TensorValues& values) const {
    if (by_name_.empty()) return;
    for (std::size_t t = 0; t < graph.tensors.size(); ++t) {
      auto it = by_name_.find(graph.tensors[t].name);
      if (it != by_name_.end()) values.mutable_f32(static_cast<TensorId>(t)) = it->second;
    }
  }
  // `values`: the inputs the step ran on; advanced in place to the next step's.
  void update(const workloads::training::TrainingLayout& layout, const OpGraph& graph, const TensorValues& outputs,
              TensorValues& values) {
    workloads::training::advance_step(layout, outputs, values);
    for (const auto& slot : layout.parameters) {
      by_name_[graph.tensor(slot.param).name] = values.f32(slot.param);
      if (slot.state >= 0) by_name_[graph.tensor(slot.state).name] = values.f32(slot.state);
    }
    if (layout.step >= 0) by_name_[graph.tensor(layout.step).name] = values.f32(layout.step);
  }

 private:
  std::map<std::string, std::vector<float>> by_name_;
};

// What one backend did over the run's batches.
struct BackendRun {
  bool fixed_shapes = false;
  CarriedState state;
  std::vector<double> step_s;
  std::vector<std::optional<double>> loss;
  nlohmann::json per_batch = nlohmann::json::array();
  bool all_verified = true;
  std::vector<std::int64_t> failed_batches;
  std::int64_t peak_tile_bytes = -1;
  std::string peak_tile_op;
  BackendResult last;
  double wall_s = 0;
};

struct Stats {
  double min = 0, median = 0, max = 0, total = 0;
};
Stats stats_of(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  for (double x : v) s.total += x;
  return s;
}
nlohmann::json to_json(const Stats& s) { return {{"min", s.min}, {"median", s.median}, {"max", s.max}, {"total", s.total}}; }

// What the batches run carry of real work, summed: the run's own rates (nodes and edges per second) and
// its padding.
struct Work {
  std::int64_t seed_nodes = 0, nodes = 0, edges = 0, graphs = 0, loss_rows = 0;
  std::int64_t pad_nodes = 0, pad_edges = 0, pad_graphs = 0;
  std::int64_t host_input_bytes = 0;  // the host's inputs of every batch run, summed
  void add(const loaders::BatchShape& s) {
    seed_nodes += s.seed_nodes;
    nodes += s.nodes;
    edges += s.edges;
    graphs += s.graphs;
    loss_rows += s.loss_rows;
    pad_nodes += s.padding.pad_nodes;
    pad_edges += s.padding.pad_edges;
    pad_graphs += s.padding.pad_graphs;
    host_input_bytes += s.host_input_bytes;
  }
};

double items(const Work& w, loaders::LoaderSpec::Kind kind) {
  switch (kind) {
    case loaders::LoaderSpec::Kind::neighbor: return static_cast<double>(w.seed_nodes);
    case loaders::LoaderSpec::Kind::cluster: return static_cast<double>(w.nodes);
    case loaders::LoaderSpec::Kind::graphs: return static_cast<double>(w.graphs);
  }
  return 0;
}

double share(std::int64_t pad, std::int64_t real) { return pad + real > 0 ? static_cast<double>(pad) / static_cast<double>(pad + real) : 0.0; }

// One backend's step on batch k (`instance`, in the backend's shape): a fixed-shape program is planned
// (and checked against the tile memory) once, an exact-shape backend sees a new shape every batch; the
// carried parameters go in, the row and loss are recorded, the updated state carried on. Returns the
// backend's computed outputs (for the first batch's comparison across backends).
const TensorValues* run_step(BackendRun& run, Backend& backend, const workloads::Instance& instance, const RunOptions& options,
                             bool training, std::int64_t k) {
  const auto t0 = Clock::now();
  if (!run.fixed_shapes || k == 0) backend.prepare(instance.graph);
  TensorValues values = instance.values;
  run.state.apply(instance.graph, values);
  BackendResult result = backend.run(instance.graph, values, options);
  const TensorValues* outputs = backend.computed_outputs();
  const bool has_loss = training && outputs && outputs->has(instance.training.loss);
  std::optional<double> loss;
  if (has_loss) loss = outputs->f32(instance.training.loss).at(0);
  bool verified = true;
  for (const OpResult& row : result.ops) verified = verified && row.verified.value_or(true);
  if (!verified) run.failed_batches.push_back(k + 1);
  run.all_verified = run.all_verified && verified;
  nlohmann::json entry = training ? phase_times(instance.graph, result) : nlohmann::json::object();
  entry["batch"] = k + 1;
  entry["time_s"] = result.time_s;
  if (training) entry["loss"] = loss ? nlohmann::json(*loss) : nlohmann::json(nullptr);
  entry["verified"] = verified;
  if (result.host.contains("peak_tile_bytes_with_live_tensors")) {
    const std::int64_t peak = result.host["peak_tile_bytes_with_live_tensors"].get<std::int64_t>();
    entry["peak_tile_bytes"] = peak;
    if (peak > run.peak_tile_bytes) {
      run.peak_tile_bytes = peak;
      run.peak_tile_op = result.host.value("peak_tile_bytes_at_op", std::string());
    }
  }
  run.per_batch.push_back(entry);
  run.step_s.push_back(result.time_s);
  run.loss.push_back(loss);
  if (has_loss && outputs) run.state.update(instance.training, instance.graph, *outputs, values);
  run.last = std::move(result);
  run.wall_s += seconds_since(t0);
  return outputs;
}

// What the summary of every backend shares: the batches run, the epoch the throughput counts, the
// host's sampling time.
struct EpochContext {
  std::int64_t count = 0, per_epoch = 0;
  loaders::LoaderSpec::Kind kind = loaders::LoaderSpec::Kind::neighbor;
  loaders::EpochWork epoch;
  Stats sampling;
  bool training = false;
  EpochDriving driving;  // the loader's framework options (device iterations, synthetic data, asynchronous)
};

// One device's epoch as the backend's execution model prices it (results/epoch_execution.hpp): the
// loader's batches are its micro-batches, one per step, fed to one device.
std::optional<EpochExecution> priced_epoch(const backends::EpochExecutionModel& model, const EpochContext& c, double device_epoch_s,
                                           const Work& w) {
  if (!model) return std::nullopt;
  EpochDriving run = c.driving;
  run.device_epoch_s = device_epoch_s;
  run.micro_batches = static_cast<double>(c.per_epoch);
  run.gradient_accumulation = 1;
  run.devices_used = 1;
  run.input_bytes_per_micro_batch = c.count > 0 ? w.host_input_bytes / c.count : 0;
  if (c.kind == loaders::LoaderSpec::Kind::graphs) run.graphs_per_micro_batch = c.epoch.items_per_batch();
  return model(run);
}

// One backend's report entry ("minibatch": step times, epoch time, throughput, padding, host against
// device) and its line of the printed table.
nlohmann::json backend_summary(const BackendRun& run, const Work& w, const EpochContext& c, const backends::EpochExecutionModel& model,
                               const std::string& name, std::ostream& table) {
  const std::string unit = c.epoch.unit;
  const Stats steps = stats_of(run.step_s);
  const bool full_epoch = c.count >= c.per_epoch;
  double device_epoch_s = 0;
  for (std::int64_t k = 0; k < std::min(c.count, c.per_epoch); ++k) device_epoch_s += run.step_s[static_cast<std::size_t>(k)];
  if (!full_epoch) device_epoch_s = steps.total / static_cast<double>(c.count) * static_cast<double>(c.per_epoch);
  // With an execution model the epoch adds the host's calls and transfers to the steps; without, it is the steps.
  const std::optional<EpochExecution> execution = priced_epoch(model, c, device_epoch_s, w);
  const double epoch_s = execution ? execution->epoch_s : device_epoch_s;
  const double throughput = epoch_s > 0 ? static_cast<double>(c.epoch.items) / epoch_s : 0;
  const bool host_bound = c.sampling.total > steps.total;
  nlohmann::json entry = run.last.to_json();
  nlohmann::json mb;
  mb["shape"] = run.fixed_shapes ? "fixed (every batch padded to one compiled shape)" : "exact (each batch's own shape)";
  mb["batches"] = c.count;
  mb["step_time_s"] = to_json(steps);
  mb["epoch_time_s"] = epoch_s;
  mb["epoch_time_from"] = full_epoch ? "the first epoch's batches" : "the mean step of " + std::to_string(c.count) + " of " +
                                                                          std::to_string(c.per_epoch) + " batches, times the epoch's batches";
  mb["throughput"] = {{"unit", unit + "_per_s"},
                      {"value", throughput},
                      {"counts", c.epoch.counts() + " over the epoch time" +
                                     (execution ? std::string(" (the execution model's: steps, host calls and host I/O)") : std::string())},
                      {"epoch_items", c.epoch.items},
                      {"of_the_batches_run", steps.total > 0 ? items(w, c.kind) / steps.total : 0},
                      {"nodes_per_s", steps.total > 0 ? static_cast<double>(w.nodes) / steps.total : 0},
                      {"edges_per_s", steps.total > 0 ? static_cast<double>(w.edges) / steps.total : 0}};
  if (c.kind == loaders::LoaderSpec::Kind::graphs) mb["throughput"]["graphs_per_s"] = throughput;
  if (execution) {
    // What the execution model adds, beside the figures of the device's steps alone.
    mb["device_only_epoch_time_s"] = device_epoch_s;
    mb["throughput"]["device_only_value"] = device_epoch_s > 0 ? static_cast<double>(c.epoch.items) / device_epoch_s : 0;
    mb["execution"] = execution->to_json();
  }
  mb["real_work"] = {{"seed_nodes", w.seed_nodes}, {"nodes", w.nodes}, {"edges", w.edges}, {"graphs", w.graphs}, {"loss_rows", w.loss_rows}};
  mb["padding"] = {{"nodes", w.pad_nodes}, {"edges", w.pad_edges}, {"graphs", w.pad_graphs},
                   {"node_share", share(w.pad_nodes, w.nodes)}, {"edge_share", share(w.pad_edges, w.edges)}};
  mb["host_vs_device"] = {
      {"host_sampling_s", c.sampling.total},
      {"device_s", steps.total},
      {"serial_s", c.sampling.total + steps.total},
      {"overlapped_s", std::max(c.sampling.total, steps.total)},
      {"bound", host_bound ? "host" : "device"},
      {"how", "serial: the host makes each batch, then the device runs it; overlapped: a loader worker makes the next "
              "batch while the device runs this one (PyTorch DataLoader with num_workers > 0), so the slower side "
              "bounds the run. Host time is measured on this host; device time is the backend's (" +
                  to_string(run.last.kind) + ")"}};
  if (run.peak_tile_bytes >= 0) mb["peak_tile_bytes"] = {{"bytes", run.peak_tile_bytes}, {"at_op", run.peak_tile_op}};
  if (c.training) {
    nlohmann::json losses = nlohmann::json::array();
    for (const auto& l : run.loss) losses.push_back(l ? nlohmann::json(*l) : nlohmann::json(nullptr));
    mb["loss"] = losses;
  }
  mb["all_batches_verified"] = run.all_verified;
  mb["failed_batches"] = run.failed_batches;
  mb["per_batch"] = run.per_batch;
  mb["run_wall_s"] = run.wall_s;
  entry["minibatch"] = mb;

  std::ostringstream pad;
  pad << std::fixed << std::setprecision(1) << 100.0 * share(w.pad_edges, w.edges) << "%";
  table << std::left << std::setw(26) << name << std::right << std::setw(11) << format_time(steps.min) << std::setw(11)
        << format_time(steps.median) << std::setw(11) << format_time(steps.max) << std::setw(13)
        << format_time(epoch_s) + (full_epoch ? "" : "*") << std::setw(16) << si_text(throughput, "") << std::setw(9)
        << (run.fixed_shapes ? pad.str() : "-") << std::setw(13) << (host_bound ? "host" : "device") << "\n";
  return entry;
}

// report.json's "loader": the loader, its epoch (what a throughput counts), the host's sampling, the
// fixed shape.
nlohmann::json loader_json(const loaders::BatchSource& source, const loaders::EpochWork& epoch, const Stats& sampling,
                           const std::optional<loaders::PaddedShape>& padded) {
  nlohmann::json loader{{"description", source.describe()},
                        {"batches_per_epoch", source.batches_per_epoch()},
                        {"epoch", {{"batches", epoch.batches}, {"items", epoch.items}, {"unit", epoch.unit},
                                   {"from", "the loader's plan of every batch of the first epoch (seeds, clusters or graph ids)"}}},
                        {"preprocess_s", source.preprocess_s()},
                        {"sampling_s", to_json(sampling)},
                        {"sampling_what", "measured on this host, one thread: each batch's neighbour sampling, cluster cut or "
                                          "collation and relabelling (padding and input generation excluded)"}};
  if (padded)
    loader["fixed_shape"] = {{"num_nodes", padded->size.num_nodes},
                             {"num_edges", padded->size.num_edges},
                             {"num_graphs", padded->size.num_graphs},
                             {"loss_rows", padded->loss_rows},
                             {"from", padded->from_loader ? "the loader's fixed_size" : "the largest batch of the run (plus one padding node and graph)"}};
  return loader;
}

// The printed lines on the loader: what it is, its sampling time, the fixed shape.
std::string loader_text(const loaders::BatchSource& source, const Stats& sampling, const std::optional<loaders::PaddedShape>& padded) {
  std::ostringstream text;
  text << source.describe() << "\nhost sampling per batch: median " << format_time(sampling.median) << ", max "
       << format_time(sampling.max) << " (measured);";
  if (padded)
    text << " fixed shape " << padded->size.num_nodes << " nodes, " << padded->size.num_edges << " edges"
         << (padded->size.num_graphs ? ", " + std::to_string(padded->size.num_graphs) + " graphs" : std::string()) << " ("
         << (padded->from_loader ? "loader's fixed_size" : "largest batch") << ")";
  return text.str();
}

// A progress line on stderr: the batch and each backend's last step time and loss.
void print_progress(std::int64_t k, std::int64_t count, const std::vector<BackendRun>& runs,
                    const std::vector<backends::BackendSpec>& specs) {
  std::cerr << "tilesim:   batch " << k + 1 << "/" << count;
  for (std::size_t b = 0; b < runs.size(); ++b) {
    std::cerr << "  " << specs[b].name() << " " << format_time(runs[b].step_s.back());
    if (runs[b].loss.back()) std::cerr << " loss " << std::setprecision(5) << *runs[b].loss.back();
  }
  std::cerr << std::endl;
}

// A line per backend whose epoch an execution model priced: its host calls and I/O beside the steps.
std::string execution_lines(const nlohmann::json& results) {
  std::ostringstream text;
  for (const nlohmann::json& r : results)
    if (r["minibatch"].contains("execution")) {
      const nlohmann::json& e = r["minibatch"]["execution"];
      text << r.value("backend", std::string()) << ": epoch priced by " << e["model"].get<std::string>() << ": "
           << e["host_calls_per_epoch"].get<std::int64_t>() << " host calls, host I/O "
           << format_time(e["host_link"]["exposed_s"].get<double>() + e["stream_copy"]["total_s"].get<double>());
      if (const double prep = e["batch_preparation"]["exposed_s"].get<double>(); prep > 0)
        text << ", batch preparation " << format_time(prep);
      text << ", the steps alone " << format_time(e["device_only_epoch_time_s"].get<double>()) << "\n";
    }
  return text.str();
}

}  // namespace

MiniBatchOutcome run_batches(const RunRequest& request, std::vector<std::unique_ptr<Backend>>& backends, const loaders::BatchSource& source) {
  const workloads::Workload& workload = request.workload;
  const std::vector<backends::BackendSpec>& specs = request.backends;
  const bool progress = request.progress && request.lead;
  const bool training = workload.model->train.has_value();
  if (request.batches && *request.batches < 1) throw InputError("", "--batches", "an integer >= 1", std::to_string(*request.batches));

  // Every batch of the run, each timed as the host makes it.
  const std::int64_t count = source.batches_to_run(request.batches);
  if (progress)
    std::cerr << "tilesim: " << source.describe() << " (built in " << format_time(source.preprocess_s()) << "); running "
              << count << " batch" << (count == 1 ? "" : "es") << std::endl;
  std::vector<loaders::Batch> batches;
  std::vector<double> sample_s;
  batches.reserve(static_cast<std::size_t>(count));
  for (std::int64_t k = 0; k < count; ++k) {
    const auto t0 = Clock::now();
    batches.push_back(source.make(k));
    sample_s.push_back(seconds_since(t0));
  }

  std::vector<BackendRun> runs(backends.size());
  bool any_fixed = false, any_exact = false;
  for (std::size_t b = 0; b < backends.size(); ++b) {
    runs[b].fixed_shapes = specs[b].descriptor->info().fixed_shapes;
    (runs[b].fixed_shapes ? any_fixed : any_exact) = true;
  }
  std::optional<loaders::PaddedShape> padded;
  if (any_fixed) padded = loaders::padded_shape(source, batches);

  RunOptions options;
  options.timing_only = request.timing_only;
  options.warmup = request.warmup;
  options.repeats = request.repeats;
  Work exact_work, padded_work;
  nlohmann::json agreements = nlohmann::json::array();
  bool all_agree = true;
  const std::int64_t progress_every = std::max<std::int64_t>(1, count / 10);
  for (std::int64_t k = 0; k < count; ++k) {
    // The batch in each shape a backend needs; the same inputs on every backend of one shape.
    std::optional<loaders::LoweredBatch> exact, fixed;
    if (any_exact) exact = loaders::lower_batch(workload, source, k, batches[static_cast<std::size_t>(k)], std::nullopt);
    if (any_fixed) fixed = loaders::lower_batch(workload, source, k, batches[static_cast<std::size_t>(k)], padded);
    if (exact) exact_work.add(exact->shape);
    if (fixed) padded_work.add(fixed->shape);
    std::vector<OutputsOf> exact_outputs, fixed_outputs;
    for (std::size_t b = 0; b < backends.size(); ++b) {
      const workloads::Instance& instance = runs[b].fixed_shapes ? fixed->instance : exact->instance;
      const TensorValues* outputs = run_step(runs[b], *backends[b], instance, options, training, k);
      if (k == 0) (runs[b].fixed_shapes ? fixed_outputs : exact_outputs).push_back({specs[b].name(), outputs, backends[b]->accumulation()});
    }
    // The first batch's ops, compared across the backends of one shape (same graph, same inputs).
    if (k == 0) {
      if (exact_outputs.size() > 1) {
        const nlohmann::json a = op_agreements(exact->instance.graph, exact->instance.values, exact_outputs, all_agree);
        agreements.insert(agreements.end(), a.begin(), a.end());
      }
      if (fixed_outputs.size() > 1) {
        const nlohmann::json a = op_agreements(fixed->instance.graph, fixed->instance.values, fixed_outputs, all_agree);
        agreements.insert(agreements.end(), a.begin(), a.end());
      }
    }
    if (progress && count > 1 && ((k + 1) % progress_every == 0 || k + 1 == count)) print_progress(k, count, runs, specs);
  }

  // Loss curves, pair by pair: the first batch starts every backend from the same parameters, so its
  // losses agree (padding is neutral); later ones follow each backend's own rounded updates.
  std::string loss_notes;
  std::vector<const std::vector<std::optional<double>>*> curves;
  for (const BackendRun& run : runs) curves.push_back(&run.loss);
  const nlohmann::json loss_agreements =
      training ? loss_curve_agreements(curves, specs, loss_relative_tolerance(workload.model ? workload.model->dtype : DType::float32),
                                       "batch", all_agree, loss_notes)
               : nlohmann::json::array();

  // The summary per backend.
  const Stats sampling = stats_of(sample_s);
  const std::int64_t per_epoch = source.batches_per_epoch();
  const auto kind = source.spec().kind;
  // The throughput counts the epoch's items (from the loader's plan of every batch) over the epoch's time.
  const loaders::EpochWork epoch = loaders::epoch_work(source);
  const std::string& unit = epoch.unit;
  nlohmann::json results = nlohmann::json::array();
  std::ostringstream table;
  table << "\n" << std::left << std::setw(26) << "backend" << std::right << std::setw(11) << "step min" << std::setw(11) << "median"
        << std::setw(11) << "max" << std::setw(13) << "epoch" << std::setw(16) << unit + "/s" << std::setw(9) << "padding"
        << std::setw(13) << "bound" << "\n";
  const EpochContext context{count, source.batches_per_epoch(), kind, epoch, sampling, training, loader_driving(workload)};
  for (std::size_t b = 0; b < runs.size(); ++b) {
    const backends::EpochExecutionModel model = specs[b].descriptor->epoch_execution_model(specs[b]);
    nlohmann::json entry =
        backend_summary(runs[b], runs[b].fixed_shapes ? padded_work : exact_work, context, model, specs[b].name(), table);
    if (auto machine = backends[b]->machine_provenance(); !machine.is_null()) entry["machine_provenance"] = machine;
    results.push_back(entry);
  }

  nlohmann::json report = report_header(request);
  report["options"]["batches"] = count;
  report["loader"] = loader_json(source, epoch, sampling, padded);
  report["results"] = results;
  report["agreement"] = agreements;
  if (training) report["loss_agreement"] = loss_agreements;
  MiniBatchOutcome outcome;
  outcome.all_verified = all_agree;
  for (const auto& r : runs) outcome.last_batch.push_back(r.last);
  for (const auto& r : runs) outcome.all_verified = outcome.all_verified && r.all_verified;
  const bool all_verified = outcome.all_verified;
  std::ostringstream text;
  text << "last batch:\n" << format_table(outcome.last_batch) << "\n" << loader_text(source, sampling, padded) << table.str();
  if (count < per_epoch) text << "* epoch time estimated from " << count << " of " << per_epoch << " batches\n";
  text << execution_lines(results);
  text << loss_notes;
  if (!agreements.empty() || !loss_agreements.empty())
    text << (all_agree ? "outputs agree across backends\n" : "OUTPUTS DIFFER across backends (see report)\n");
  if (!all_verified) text << "SOME BATCHES NOT VERIFIED (see report)\n";
  outcome.report = std::move(report);
  outcome.text = text.str();
  return outcome;
}

RunResult run_loader(const RunRequest& request, std::vector<std::unique_ptr<Backend>>& backends) {
  // The loader's graph or dataset is built once; then the batches run.
  if (request.progress && request.lead) std::cerr << "tilesim: building the loader's graph ..." << std::endl;
  const loaders::BatchSource source(request.workload);
  MiniBatchOutcome outcome = run_batches(request, backends, source);
  RunResult result;
  result.report = std::move(outcome.report);
  result.summary = std::move(outcome.text);
  result.results = std::move(outcome.last_batch);
  result.all_verified = outcome.all_verified;
  return result;
}

}  // namespace tilesim::runs
