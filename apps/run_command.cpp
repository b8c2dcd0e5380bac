// tilesim run WORKLOAD.json: every backend runs every op of the workload on the same inputs; the
// outputs are verified against the reference and against each other, and report.json is written.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "apps/commands.hpp"
#include "apps/report_writer.hpp"
#include "apps/training_run.hpp"
#include "backends/registry.hpp"
#include "common/error.hpp"
#include "common/tool_identity.hpp"
#include "ir/reference/compare.hpp"
#include "workloads/workload.hpp"

namespace tilesim::cli {

namespace {

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

// The trace file of one simulated backend: the path as given when there is one, else one per machine.
std::string trace_path_for(const std::string& path, const backends::BackendSpec& spec, std::size_t traced_backends) {
  if (path.empty() || traced_backends <= 1) return path;
  std::filesystem::path p(path);
  std::string tag = std::filesystem::path(spec.machine).stem().string();
  return (p.parent_path() / (p.stem().string() + "." + tag + p.extension().string())).string();
}

void check_writable(const std::string& path, const std::string& what) {
  std::ofstream probe(path, std::ios::app);
  if (!probe) throw InputError(path, "", "a writable path for " + what, "it cannot be opened for writing");
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

}  // namespace

int run_command(const RunArgs& args) {
  if (args.repeats < 1) throw InputError("", "--repeats", "an integer >= 1", std::to_string(args.repeats));
  if (args.warmup < 0) throw InputError("", "--warmup", "an integer >= 0", std::to_string(args.warmup));
  const auto specs = backends::parse_backend_list(args.backends);
  workloads::Workload workload = workloads::load_workload(args.workload);
  if (args.seed) workload.seed = *args.seed;
  const bool training = workload.model && workload.model->train;
  if (args.steps && !training)
    throw InputError(args.workload, "train", "a \"train\" section for --steps to apply to", "a workload without one");
  if (args.steps && *args.steps < 1) throw InputError("", "--steps", "an integer >= 1", std::to_string(*args.steps));
  const std::int64_t steps = training ? args.steps.value_or(workload.model->train->steps) : 0;
  if (training) {
    // Which families run training steps is theirs to say (FamilyInfo::runs_training_steps).
    std::string trainers, forward_only;
    for (const auto* f : backends::all_families()) {
      std::string& list = f->info().runs_training_steps ? trainers : forward_only;
      list += (list.empty() ? "" : ", ") + f->info().family;
    }
    for (const auto& s : specs)
      if (!s.descriptor->info().runs_training_steps)
        throw InputError(args.workload, "train",
                         "backends that run training steps (" + trainers + "; " + forward_only +
                             " run forward passes only so far)",
                         s.name() + " in --backends");
  }

  // Build every backend (machine files are read here) before any work, so bad input fails fast.
  std::vector<std::unique_ptr<Backend>> backends;
  std::size_t traced_count = 0;
  for (const auto& s : specs) {
    backends.push_back(backends::make_backend(s));
    traced_count += s.descriptor->info().writes_traces ? 1 : 0;
  }

  const std::string out_dir = args.out_dir.empty() ? "out/" + workload.name : args.out_dir;
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir, "", "a directory the report can be written to (--out)", ec.message());
  const std::string report_path = (std::filesystem::path(out_dir) / "report.json").string();
  if (!args.trace.empty()) check_writable(args.trace, "the trace (--trace)");

  // Plan first: a workload that does not fit fails before any input is generated. The workload is
  // lowered once; its graph is planned here and then filled with inputs.
  workloads::Lowered lowered = workloads::lower(workload);
  for (auto& b : backends) b->prepare(lowered.graph);
  const workloads::Instance instance = workloads::instantiate(workload, std::move(lowered));
  RunOptions options;
  options.timing_only = args.timing_only;
  options.warmup = args.warmup;
  options.repeats = args.repeats;

  std::vector<BackendResult> results;
  std::vector<TrainingRun> training_runs;
  for (std::size_t b = 0; b < backends.size(); ++b) {
    options.trace_path = specs[b].descriptor->info().writes_traces ? trace_path_for(args.trace, specs[b], traced_count) : "";
    if (!args.json) std::cerr << "tilesim: running " << specs[b].name() << (training ? ", " + std::to_string(steps) + " training steps" : "") << " ..." << std::endl;
    if (training) {
      training_runs.push_back(run_training_steps(*backends[b], instance, steps, options, !args.json));
      results.push_back(training_runs.back().last_step);
    } else {
      results.push_back(backends[b]->run(instance.graph, instance.values, options));
    }
  }

  // Cross-backend agreement: every pair of backends that computed outputs, op by op. An op that reads
  // only graph inputs sees identical operands on both backends, so both lie within the reference's bound
  // ("bound"). An op fed by earlier ops' outputs (the ops of a GNN layer) sees each backend's own
  // operands, which may differ by rounding; each backend's output was verified against its own operands
  // already, and the two are compared against the bound computed from backend a's operands, or failing
  // that within a relative tolerance of the output's largest magnitude ("chained").
  constexpr double chained_relative_tolerance = 1e-4;
  std::vector<bool> is_output(instance.graph.tensors.size(), false);
  for (const Op& op : instance.graph.ops) is_output[static_cast<std::size_t>(op.output)] = true;
  auto chained = [&](const Op& op) {
    for (TensorId t : {op.input, op.indices, op.weight, op.bias})
      if (t >= 0 && is_output[static_cast<std::size_t>(t)]) return true;
    return false;
  };
  nlohmann::json agreements = nlohmann::json::array();
  bool all_agree = true;
  for (std::size_t a = 0; a < backends.size(); ++a) {
    for (std::size_t b = a + 1; b < backends.size(); ++b) {
      const TensorValues* oa = backends[a]->computed_outputs();
      const TensorValues* ob = backends[b]->computed_outputs();
      for (const Op& op : instance.graph.ops) {
        if (!oa || !ob || !oa->has(op.output) || !ob->has(op.output)) continue;
        const bool from_outputs = chained(op);
        auto agreement = from_outputs
                             ? reference::compare_outputs(op, instance.values, *oa, oa->f32(op.output), ob->f32(op.output))
                             : reference::compare_outputs(op, instance.values, oa->f32(op.output), ob->f32(op.output));
        if (from_outputs && !agreement.equal) {
          double magnitude = 0;
          for (float v : oa->f32(op.output)) magnitude = std::max(magnitude, static_cast<double>(std::abs(v)));
          if (agreement.max_abs_difference <= chained_relative_tolerance * std::max(1.0, magnitude)) {
            agreement.equal = true;
            agreement.detail = "within " + std::to_string(chained_relative_tolerance) +
                               " of the output's largest magnitude (operands computed by each backend)";
          }
        }
        all_agree = all_agree && agreement.equal;
        agreements.push_back({{"op", op.name},
                              {"backends", {specs[a].name(), specs[b].name()}},
                              {"check", from_outputs ? "chained" : "bound"},
                              {"outputs_equal", agreement.equal},
                              {"max_abs_difference", agreement.max_abs_difference},
                              {"detail", agreement.detail}});
      }
    }
  }

  // Training: each pair of loss curves, step by step. The backends start from the same parameters and
  // each follows its own updates, so their losses differ by rounding that the steps carry forward; the
  // tolerance is relative to the loss (max(1, |loss|)).
  constexpr double loss_relative_tolerance = 1e-4;
  nlohmann::json loss_agreements = nlohmann::json::array();
  for (std::size_t a = 0; a < training_runs.size(); ++a)
    for (std::size_t b = a + 1; b < training_runs.size(); ++b) {
      const LossAgreement la = compare_losses(training_runs[a].loss, training_runs[b].loss, loss_relative_tolerance);
      all_agree = all_agree && la.equal;
      loss_agreements.push_back({{"backends", {specs[a].name(), specs[b].name()}},
                                 {"losses_equal", la.equal},
                                 {"max_abs_difference", la.max_abs_difference},
                                 {"worst_step", la.worst_step},
                                 {"detail", "every step within " + std::to_string(loss_relative_tolerance) + " of max(1, |loss|)"}});
    }

  nlohmann::json report;
  report["tool"] = tool_identity();
  report["created_utc"] = utc_now();
  report["workload"] = workloads::to_json(workload);
  report["options"] = {{"backends", args.backends}, {"timing_only", args.timing_only},
                       {"warmup", args.warmup}, {"repeats", args.repeats}};
  if (training) report["options"]["steps"] = steps;
  report["results"] = nlohmann::json::array();
  for (std::size_t b = 0; b < results.size(); ++b) {
    nlohmann::json entry = results[b].to_json();
    // Per-layer totals beside the per-op rows (a GNN layer or a schnet_block is several ops).
    if (!instance.graph.groups.empty()) entry["groups"] = group_totals(instance.graph.groups, results[b]);
    // The whole machine the backend modeled, so a number can be traced to the figures behind it.
    if (auto machine = backends[b]->machine_provenance(); !machine.is_null()) entry["machine_provenance"] = machine;
    if (training) entry["training"] = training_runs[b].summary;
    report["results"].push_back(entry);
  }
  report["agreement"] = agreements;
  if (training) report["loss_agreement"] = loss_agreements;
  write_file_atomically(report_path, report.dump(2) + "\n");

  if (args.json) {
    std::cout << report.dump(2) << std::endl;
  } else {
    std::cout << format_table(results, instance.graph.groups);
    if (training) std::cout << format_losses(specs, training_runs);
    if (!agreements.empty()) {
      std::cout << (all_agree ? "outputs agree across backends\n" : "OUTPUTS DIFFER across backends (see report)\n");
    }
    std::cout << "report: " << report_path << "\n";
    if (!args.trace.empty()) std::cout << "trace: " << args.trace << (traced_count > 1 ? " (one file per IPU machine)" : "") << "\n";
  }
  bool all_verified = all_agree;
  for (const auto& r : results) {
    for (const auto& o : r.ops) all_verified = all_verified && o.verified.value_or(true);
  }
  for (const auto& t : training_runs) all_verified = all_verified && t.all_steps_verified;
  // A wrong output is a defect of tilesim, not of the input.
  return all_verified ? 0 : static_cast<int>(ExitCode::internal_error);
}

}  // namespace tilesim::cli
