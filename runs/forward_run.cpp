#include "runs/forward_run.hpp"

#include <iomanip>
#include <iostream>
#include <sstream>

#include "backends/registry.hpp"
#include "common/error.hpp"
#include "runs/agreement.hpp"
#include "runs/plan_budgets.hpp"
#include "runs/report_header.hpp"
#include "runs/result_tables.hpp"
#include "runs/training_run.hpp"

namespace tilesim::runs {

namespace {

// The trace file of one simulated backend: the path as given when there is one, else one per machine.
std::string trace_path_for(const std::string& path, const backends::BackendSpec& spec, std::size_t traced_backends) {
  if (path.empty() || traced_backends <= 1) return path;
  std::filesystem::path p(path);
  std::string tag = std::filesystem::path(spec.machine).stem().string();
  return (p.parent_path() / (p.stem().string() + "." + tag + p.extension().string())).string();
}

// One line per step: each backend's loss (the short loss curve `tilesim run` prints), then each
// backend's median step time and its split.
std::string format_losses(const std::vector<backends::BackendSpec>& specs, const std::vector<TrainingRun>& runs) {
  std::ostringstream out;
  out << "\nstep";
  for (const auto& s : specs) out << "  " << std::setw(14) << s.name();
  out << "   (loss)\n";
  const std::size_t steps = runs.empty() ? 0 : runs.front().loss.size();
  for (std::size_t k = 0; k < steps; ++k) {
    out << std::setw(4) << k + 1;
    for (const auto& r : runs) {
      out << "  " << std::setw(14);
      if (r.loss[k]) out << std::setprecision(7) << *r.loss[k];
      else out << "-";
    }
    out << "\n";
  }
  for (std::size_t b = 0; b < runs.size(); ++b) {
    const nlohmann::json& last = runs[b].summary["last_step"];
    out << specs[b].name() << ": median step " << std::setprecision(4) << runs[b].summary["median_step_time_s"].get<double>() * 1e3
        << " ms; last step forward " << last["forward_s"].get<double>() * 1e3 << " ms, loss " << last["loss_s"].get<double>() * 1e3
        << " ms, backward " << last["backward_s"].get<double>() * 1e3 << " ms, optimizer " << last["optimizer_s"].get<double>() * 1e3
        << " ms";
    if (const auto& ratio = runs[b].summary["backward_to_forward"]; ratio.is_number())
      out << "; backward/forward " << std::setprecision(3) << ratio.get<double>() << "x";
    out << (runs[b].all_steps_verified ? "" : "; SOME STEPS NOT VERIFIED") << "\n";
  }
  return out.str();
}

// report.json's entry of a refused backend: the fields every entry has, no numbers, and the refusal.
nlohmann::json refused_entry(const RefusedBackend& r) {
  return {{"backend", r.backend}, {"kind", to_string(r.kind)}, {"machine", r.machine}, {"status", "refused"},
          {"refused", "does not fit: " + r.message}, {"time_s", nullptr}, {"cycles", nullptr}, {"ops", nlohmann::json::array()}};
}

// Whether every backend reads shapes alone (models such as gpu-model), so no input need be generated.
bool reads_shapes_only(const std::vector<backends::BackendSpec>& specs) {
  for (const auto& s : specs)
    if (s.descriptor->info().reads_input_values) return false;
  return true;
}

// Plans the graph on each backend. A backend the workload does not fit (PlanError) is left out of
// `backends` and `specs` and returned as refused; the others run, so a comparison still has their
// numbers (the exit code is still 3, does not fit). When every backend refuses there is nothing to
// report: the first refusal is thrown, as with one backend.
std::vector<RefusedBackend> prepare_or_refuse(const OpGraph& graph, std::vector<std::unique_ptr<Backend>>& backends,
                                              std::vector<backends::BackendSpec>& specs) {
  std::vector<RefusedBackend> refused;
  std::vector<PlanError> refusals;
  for (std::size_t b = 0; b < backends.size();) {
    try {
      backends[b]->prepare(graph);
      ++b;
    } catch (const PlanError& e) {
      refused.push_back({specs[b].name(), specs[b].descriptor->info().kind, specs[b].machine, e.what()});
      refusals.push_back(e);
      backends.erase(backends.begin() + static_cast<std::ptrdiff_t>(b));
      specs.erase(specs.begin() + static_cast<std::ptrdiff_t>(b));
    }
  }
  if (backends.empty()) throw refusals.front();
  return refused;
}

// What a forward or training run produced on every backend, for its report and its printed table.
struct RunOutcome {
  const std::vector<BackendResult>& results;
  const std::vector<TrainingRun>& training_runs;
  const std::vector<RefusedBackend>& refused;
  const nlohmann::json& agreements;
  const nlohmann::json& loss_agreements;
  const std::string& loss_notes;
  bool all_agree;
};

// report.json of a run without a loader or a parallel section: the workload and options echoed, each
// backend's result with its layers' totals, machine figures and training summary, the refusals, the
// agreement checks.
nlohmann::json run_report(const RunRequest& request, std::int64_t steps, bool shapes_only, const OpGraph& graph,
                          const std::vector<std::unique_ptr<Backend>>& backends, const RunOutcome& o) {
  const workloads::Workload& workload = request.workload;
  const bool training = workload.model && workload.model->train;
  nlohmann::json report = report_header(request);
  if (training) report["options"]["steps"] = steps;
  report["options"]["shapes_only"] = shapes_only;
  if (workload.available_memory_proportion) report["options"]["available_memory_proportion"] = *workload.available_memory_proportion;
  report["results"] = nlohmann::json::array();
  for (std::size_t b = 0; b < o.results.size(); ++b) {
    nlohmann::json entry = o.results[b].to_json();
    // Per-layer totals beside the per-op rows (a GNN layer or a schnet_block is several ops).
    if (!graph.groups.empty()) entry["groups"] = group_totals(graph.groups, o.results[b]);
    // The whole machine the backend modeled, so a number can be traced to the figures behind it.
    if (auto machine = backends[b]->machine_provenance(); !machine.is_null()) entry["machine_provenance"] = machine;
    if (training) entry["training"] = o.training_runs[b].summary;
    report["results"].push_back(entry);
  }
  for (const RefusedBackend& r : o.refused) report["results"].push_back(refused_entry(r));
  report["agreement"] = o.agreements;
  if (training) report["loss_agreement"] = o.loss_agreements;
  return report;
}

// The printed summary of such a run: per-op rows and layer totals, losses, plans under a proportion,
// refusals, agreement.
std::string run_summary(const workloads::Workload& workload, const std::vector<backends::BackendSpec>& specs, const OpGraph& graph,
                        const RunOutcome& o) {
  const bool training = workload.model && workload.model->train;
  std::ostringstream out;
  out << format_table(o.results, graph.groups);
  if (training) out << format_losses(specs, o.training_runs) << o.loss_notes;
  // Which plan each op got under its proportion, when one was chosen for it (flag or op field).
  bool proportion_given = workload.available_memory_proportion.has_value();
  for (const auto& op : workload.ops) proportion_given = proportion_given || op.available_memory_proportion.has_value();
  if (workload.model)
    for (const auto& layer : workload.model->layers)
      proportion_given = proportion_given || layer.available_memory_proportion.has_value();
  if (proportion_given) out << format_plan_budgets(o.results);
  for (const RefusedBackend& r : o.refused) out << r.backend << ": REFUSED, does not fit: " << r.message << "\n";
  if (!o.agreements.empty()) {
    out << (o.all_agree ? "outputs agree across backends\n" : "OUTPUTS DIFFER across backends (see report)\n");
  }
  return out.str();
}

}  // namespace

RunResult run_forward(const RunRequest& request, std::vector<std::unique_ptr<Backend>> backends, std::int64_t steps) {
  const workloads::Workload& workload = request.workload;
  std::vector<backends::BackendSpec> specs = request.backends;  // less the backends that refuse the workload, below
  const bool training = steps > 0;
  const bool progress = request.progress && request.lead;
  RunResult result;
  for (const auto& s : specs) result.traced_backends += s.descriptor->info().writes_traces ? 1 : 0;
  // Plan first: a workload that does not fit fails before any input is generated. The workload is
  // lowered once; its graph is planned here and then filled with inputs.
  // When every backend is a model that reads shapes alone (gpu-model), no input is generated and a
  // model's tensors need not fit this host's memory (values a caller hands in are kept, and unread).
  workloads::Lowered lowered = workloads::lower(workload, reads_shapes_only(specs));
  const std::vector<RefusedBackend> refused = prepare_or_refuse(lowered.graph, backends, specs);
  // With the refusing backends gone, the rest may all read shapes alone: then no input is generated.
  const bool shapes_only = reads_shapes_only(specs);
  workloads::Instance instance = workloads::instantiate(workload, std::move(lowered), shapes_only);
  if (request.set_inputs) request.set_inputs(instance.graph, instance.values);
  RunOptions options;
  options.timing_only = request.timing_only;
  options.warmup = request.warmup;
  options.repeats = request.repeats;

  std::vector<BackendResult> results;
  std::vector<TrainingRun> training_runs;
  for (std::size_t b = 0; b < backends.size(); ++b) {
    options.trace_path =
        specs[b].descriptor->info().writes_traces && request.lead ? trace_path_for(request.trace_path, specs[b], result.traced_backends) : "";
    if (progress) std::cerr << "tilesim: running " << specs[b].name() << (training ? ", " + std::to_string(steps) + " training steps" : "") << " ..." << std::endl;
    if (training) {
      training_runs.push_back(run_training_steps(*backends[b], instance, steps, options, progress));
      results.push_back(training_runs.back().last_step);
    } else {
      results.push_back(backends[b]->run(instance.graph, instance.values, options));
    }
  }

  if (request.outputs) {
    for (std::size_t b = 0; b < backends.size(); ++b) {
      const TensorValues* out = training ? &training_runs[b].first_step_outputs : backends[b]->computed_outputs();
      if (out) request.outputs(specs[b].name(), instance.graph, *out);
    }
  }

  // Cross-backend agreement, op by op (runs/agreement.hpp); a training run compares its first steps,
  // which every backend runs on the same inputs.
  std::vector<OutputsOf> computed;
  for (std::size_t b = 0; b < backends.size(); ++b)
    computed.push_back({specs[b].name(), training ? &training_runs[b].first_step_outputs : backends[b]->computed_outputs(),
                        backends[b]->accumulation()});
  bool all_agree = true;
  const nlohmann::json agreements = op_agreements(instance.graph, instance.values, computed, all_agree);

  // Training: each pair of loss curves, step by step (training_run.hpp: the first step must agree; a
  // later difference is each backend's own rounding carried forward, reported beside the curves).
  std::string loss_notes;
  std::vector<const std::vector<std::optional<double>>*> curves;
  for (const TrainingRun& t : training_runs) curves.push_back(&t.loss);
  const nlohmann::json loss_agreements =
      loss_curve_agreements(curves, specs, loss_relative_tolerance(workload.model ? workload.model->dtype : DType::float32),
                            "step", all_agree, loss_notes);

  const RunOutcome outcome{results, training_runs, refused, agreements, loss_agreements, loss_notes, all_agree};
  result.report = run_report(request, steps, shapes_only, instance.graph, backends, outcome);
  result.summary = run_summary(workload, specs, instance.graph, outcome);
  result.all_verified = all_agree;
  for (const auto& r : results)
    for (const auto& o : r.ops) result.all_verified = result.all_verified && o.verified.value_or(true);
  for (const auto& t : training_runs) result.all_verified = result.all_verified && t.all_steps_verified;
  result.results = std::move(results);
  result.refused = refused;
  return result;
}

}  // namespace tilesim::runs
