// tilesim run WORKLOAD.json: every backend runs every op of the workload on the same inputs; the
// outputs are verified against the reference and against each other, and report.json is written.
//
// Under `mpirun -n K`, every rank runs this same command on the same inputs, and the simulated
// engine spreads a multi-chip machine's functional programs over the ranks (sim/engine.hpp); rank 0
// alone prints and writes files (report, trace), the others run silently beside it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "apps/agreement.hpp"
#include "apps/commands.hpp"
#include "apps/memory_proportion.hpp"
#include "apps/minibatch_run.hpp"
#include "apps/report_writer.hpp"
#include "apps/scaling_run.hpp"
#include "apps/training_run.hpp"
#include "backends/registry.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/tool_identity.hpp"
#include "common/wall_clock.hpp"
#include "ir/reference/compare.hpp"
#include "mpi/world.hpp"
#include "sim/engine.hpp"
#include "workloads/workload.hpp"

namespace tilesim::cli {

namespace {

// The trace file of one simulated backend: the path as given when there is one, else one per machine.
std::string trace_path_for(const std::string& path, const backends::BackendSpec& spec, std::size_t traced_backends) {
  if (path.empty() || traced_backends <= 1) return path;
  std::filesystem::path p(path);
  std::string tag = std::filesystem::path(spec.machine).stem().string();
  return (p.parent_path() / (p.stem().string() + "." + tag + p.extension().string())).string();
}

// Opens `path` for appending to learn early that it can be written; a file that was not there before
// is removed again, so a run that fails later leaves nothing behind.
void check_writable(const std::string& path, const std::string& what) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec);
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, "", "a writable file path for " + what, "a directory");
  {
    std::ofstream probe(path, std::ios::app);
    if (!probe) throw InputError(path, "", "a writable path for " + what, "it cannot be opened for writing");
  }
  if (!existed) std::filesystem::remove(path, ec);
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

// A backend the workload does not fit: its name, what it is and why it refused (PlanError's message).
struct RefusedBackend {
  std::string backend;
  ResultKind kind;
  std::string machine;
  std::string message;
};

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

// Under mpirun: what the engine's spreading over the ranks did (sums over ranks; every rank must call
// this, since it adds over them), printed by rank 0 beside the run's progress.
void report_rank_spread(bool print) {
  const mpi::World& world = mpi::world();
  if (world.size < 2) return;
  const sim::Engine::SpreadTotals mine = sim::Engine::spread_totals();
  const std::int64_t programs = mpi::sum_over_ranks(mine.programs_spread) / world.size;
  const std::int64_t exchanged = mpi::sum_over_ranks(mine.exchange_bytes_sent);
  const std::int64_t host = mpi::sum_over_ranks(mine.host_bytes_received);
  if (!print) return;
  std::cerr << "tilesim: engine spread over " << world.size << " MPI ranks: " << programs << " functional programs spread, "
            << exchanged << " exchange bytes sent between ranks, " << host << " bytes of host reads brought from other ranks"
            << (programs == 0 ? " (none was both functional and on a machine whose chips " + std::to_string(world.size) +
                                   " ranks divide: each rank ran every program whole)"
                             : "")
            << std::endl;
}

// The command on this process; `lead` prints and writes files (rank 0, or the one process).
// The run's options checked against the workload (--batches, --trace, --steps and the proportion need
// the sections they apply to) and the backends against a training step; the training steps to run (0
// for a forward pass).
std::int64_t checked_steps(const RunArgs& args, const workloads::Workload& workload, const std::vector<backends::BackendSpec>& specs) {
  const bool training = workload.model && workload.model->train;
  const bool loader = workload.model && workload.model->loader;
  if (args.batches && !loader)
    throw InputError(args.workload, "loader", "a \"loader\" section for --batches to apply to", "a workload without one");
  if (loader && !args.trace.empty())
    throw InputError("", "--trace", "no --trace with a \"loader\" (a trace is of one step: run one batch's graph without the loader)",
                     "--trace " + args.trace);
  if (workload.available_memory_proportion && loader)
    throw InputError("", "--available-memory-proportion", "a workload without a \"loader\" (not supported with mini-batches yet)",
                     "--available-memory-proportion " + args.available_memory_proportion);
  if (args.steps && loader)
    throw InputError("", "--steps", "--batches for a workload with a loader (one step per batch)", "--steps " + std::to_string(*args.steps));
  if (args.steps && !training)
    throw InputError(args.workload, "train", "a \"train\" section for --steps to apply to", "a workload without one");
  if (args.steps) limits::checked_option("--steps", *args.steps, 1, limits::max_steps);
  if (training) {
    // The registry says which families run training steps, so this message follows it.
    std::string runs, forward_only;
    for (const backends::BackendFamily* f : backends::all_families()) {
      std::string& list = f->info().runs_training_steps ? runs : forward_only;
      list += (list.empty() ? "" : ", ") + f->info().family;
    }
    for (const auto& s : specs)
      if (!s.descriptor->info().runs_training_steps)
        throw InputError(args.workload, "train",
                         "backends that run training steps (" + runs + "; " + forward_only + " run forward passes only so far)",
                         s.name() + " in --backends");
  }
  return training ? args.steps.value_or(workload.model->train->steps) : 0;
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
nlohmann::json run_report(const RunArgs& args, const workloads::Workload& workload, std::int64_t steps, bool shapes_only,
                          const OpGraph& graph, const std::vector<std::unique_ptr<Backend>>& backends, const RunOutcome& o) {
  const bool training = workload.model && workload.model->train;
  nlohmann::json report;
  report["tool"] = tool_identity();
  report["created_utc"] = utc_now();
  report["workload"] = workloads::to_json(workload);
  report["options"] = {{"backends", args.backends}, {"timing_only", args.timing_only},
                       {"warmup", args.warmup}, {"repeats", args.repeats}};
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

// The printed table of such a run: per-op rows and layer totals, losses, plans under a proportion,
// refusals, agreement, where the report (and trace) went.
void print_run_text(const RunArgs& args, const workloads::Workload& workload, const std::vector<backends::BackendSpec>& specs,
                    const OpGraph& graph, const RunOutcome& o, const std::string& report_path, std::size_t traced_count) {
  const bool training = workload.model && workload.model->train;
  std::cout << format_table(o.results, graph.groups);
  if (training) std::cout << format_losses(specs, o.training_runs) << o.loss_notes;
  // Which plan each op got under its proportion, when one was chosen for it (flag or op field).
  bool proportion_given = workload.available_memory_proportion.has_value();
  for (const auto& op : workload.ops) proportion_given = proportion_given || op.available_memory_proportion.has_value();
  if (workload.model)
    for (const auto& layer : workload.model->layers)
      proportion_given = proportion_given || layer.available_memory_proportion.has_value();
  if (proportion_given) std::cout << format_plan_budgets(o.results);
  for (const RefusedBackend& r : o.refused) std::cout << r.backend << ": REFUSED, does not fit: " << r.message << "\n";
  if (!o.agreements.empty()) {
    std::cout << (o.all_agree ? "outputs agree across backends\n" : "OUTPUTS DIFFER across backends (see report)\n");
  }
  std::cout << "report: " << report_path << "\n";
  if (!args.trace.empty()) std::cout << "trace: " << args.trace << (traced_count > 1 ? " (one file per IPU machine)" : "") << "\n";
}

// Every output verified and every pair of first steps in agreement, else exit code 1 (a wrong output is
// a defect of tilesim, not of the input: it outranks a refusal); a backend that refused the workload,
// exit code 3, said on standard error; else 0.
int run_exit_code(const std::vector<BackendResult>& results, const std::vector<TrainingRun>& training_runs, bool all_agree,
                  const std::vector<RefusedBackend>& refused, bool lead, const std::string& report_path) {
  bool all_verified = all_agree;
  for (const auto& r : results)
    for (const auto& o : r.ops) all_verified = all_verified && o.verified.value_or(true);
  for (const auto& t : training_runs) all_verified = all_verified && t.all_steps_verified;
  if (!all_verified) return static_cast<int>(ExitCode::internal_error);
  if (!refused.empty()) {
    if (lead)
      for (const RefusedBackend& r : refused)
        std::cerr << "tilesim: error: " << r.backend << " refused the workload (the other backends ran; report: " << report_path
                  << "): " << r.message << std::endl;
    return static_cast<int>(ExitCode::does_not_fit);
  }
  return 0;
}

int run_workload(const RunArgs& args, const RunHooks* hooks, bool lead) {
  limits::checked_option("--repeats", args.repeats, 1, limits::max_timed_calls);
  limits::checked_option("--warmup", args.warmup, 0, limits::max_warmup_calls);
  if (args.batches) limits::checked_option("--batches", *args.batches, 1, limits::max_steps);
  auto specs = backends::parse_backend_list(args.backends);  // less the backends that refuse the workload, below
  workloads::Workload workload = hooks && hooks->workload_document ? workloads::parse_workload(*hooks->workload_document, args.workload)
                                                                    : workloads::load_workload(args.workload);
  if (args.seed) workload.seed = *args.seed;
  workload.available_memory_proportion = parse_memory_proportion_option(args.available_memory_proportion);
  const bool training = workload.model && workload.model->train;
  const bool loader = workload.model && workload.model->loader;
  const std::int64_t steps = checked_steps(args, workload, specs);

  // A "parallel" section: each backend as a system of devices, one device's step and the links between
  // them (apps/scaling_run.hpp), reported under "scaling".
  if (workload.parallel) {
    if (hooks && hooks->set_inputs)
      throw InputError(args.workload, "parallel", "input values made device by device (values cannot be given for a workload with a \"parallel\" section)",
                       "values given");
    const std::string dir = args.out_dir.empty() ? "out/" + workload.name : args.out_dir;
    std::error_code dir_error;
    std::filesystem::create_directories(dir, dir_error);
    if (dir_error) throw InputError(dir, "", "a directory the report can be written to (--out)", dir_error.message());
    return run_scaling(args, workload, specs, (std::filesystem::path(dir) / "report.json").string());
  }

  // Build every backend (machine files are read here) before any work, so bad input fails fast.
  std::vector<std::unique_ptr<Backend>> backends;
  for (const auto& s : specs) backends.push_back(backends::make_backend(s));
  const std::size_t traced_count = static_cast<std::size_t>(
      std::count_if(specs.begin(), specs.end(), [](const backends::BackendSpec& s) { return s.descriptor->info().writes_traces; }));

  const std::string out_dir = args.out_dir.empty() ? "out/" + workload.name : args.out_dir;
  std::error_code ec;
  if (lead) std::filesystem::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir, "", "a directory the report can be written to (--out)", ec.message());
  const std::string report_path = (std::filesystem::path(out_dir) / "report.json").string();
  if (!args.trace.empty() && lead) {
    if (traced_count == 0) {
      std::string writers;
      for (const backends::BackendFamily* f : backends::all_families())
        if (f->info().writes_traces) writers += (writers.empty() ? "" : ", ") + f->info().family;
      throw InputError("", "--trace", "a backend that writes traces (" + writers + ") in --backends", "none in \"" + args.backends + "\"");
    }
    check_writable(args.trace, "the trace (--trace)");
  }

  if (loader && hooks && hooks->set_inputs)
    throw InputError(args.workload, "loader", "input values made batch by batch (values cannot be given for a workload with a \"loader\")",
                     "values given");
  if (loader) {
    const int code = run_minibatch(args, workload, specs, backends, report_path);
    report_rank_spread(lead && !args.json);
    return code;
  }

  // Plan first: a workload that does not fit fails before any input is generated. The workload is
  // lowered once; its graph is planned here and then filled with inputs.
  // When every backend is a model that reads shapes alone (gpu-model), no input is generated and a
  // model's tensors need not fit this host's memory (values a caller hands in are kept, and unread).
  workloads::Lowered lowered = workloads::lower(workload, reads_shapes_only(specs));
  const std::vector<RefusedBackend> refused = prepare_or_refuse(lowered.graph, backends, specs);
  // With the refusing backends gone, the rest may all read shapes alone: then no input is generated.
  const bool shapes_only = reads_shapes_only(specs);
  workloads::Instance instance = workloads::instantiate(workload, std::move(lowered), shapes_only);
  if (hooks && hooks->set_inputs) hooks->set_inputs(instance.graph, instance.values);
  RunOptions options;
  options.timing_only = args.timing_only;
  options.warmup = args.warmup;
  options.repeats = args.repeats;

  std::vector<BackendResult> results;
  std::vector<TrainingRun> training_runs;
  for (std::size_t b = 0; b < backends.size(); ++b) {
    options.trace_path = specs[b].descriptor->info().writes_traces && lead ? trace_path_for(args.trace, specs[b], traced_count) : "";
    if (!args.json && lead) std::cerr << "tilesim: running " << specs[b].name() << (training ? ", " + std::to_string(steps) + " training steps" : "") << " ..." << std::endl;
    if (training) {
      training_runs.push_back(run_training_steps(*backends[b], instance, steps, options, !args.json && lead));
      results.push_back(training_runs.back().last_step);
    } else {
      results.push_back(backends[b]->run(instance.graph, instance.values, options));
    }
  }

  report_rank_spread(lead && !args.json);

  if (hooks && hooks->outputs) {
    for (std::size_t b = 0; b < backends.size(); ++b) {
      const TensorValues* out = training ? &training_runs[b].first_step_outputs : backends[b]->computed_outputs();
      if (out) hooks->outputs(specs[b].name(), instance.graph, *out);
    }
  }

  // Cross-backend agreement, op by op (apps/agreement.hpp); a training run compares its first steps,
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
  const nlohmann::json report = run_report(args, workload, steps, shapes_only, instance.graph, backends, outcome);
  if (lead) write_file_atomically(report_path, report.dump(2) + "\n");
  if (args.json)
    std::cout << report.dump(2) << std::endl;
  else
    print_run_text(args, workload, specs, instance.graph, outcome, report_path, traced_count);
  return run_exit_code(results, training_runs, all_agree, refused, lead, report_path);
}

}  // namespace

int run_command(const RunArgs& args, const RunHooks* hooks) {
  const mpi::World& world = mpi::world();
  if (world.size < 2) return run_workload(args, hooks, true);
  sim::Engine::spread_over_mpi_ranks(true);
  if (world.rank != 0 && std::freopen("/dev/null", "w", stdout) == nullptr) {
    throw Error(ExitCode::internal_error, "cannot silence standard output on " + mpi::rank_label());
  }
  try {
    return run_workload(args, hooks, world.rank == 0);
  } catch (const std::exception& e) {
    // Most failures (bad input, a vertex body's error, which the engine makes every rank's) reach every
    // rank alike: then rank 0 alone says it and every rank exits with the code one process gives. A
    // failure on some ranks alone (a rank's host memory, say) would leave the others waiting for their
    // next message for ever: the ranks that failed say it, with their rank, and end the whole job.
    const auto* error = dynamic_cast<const Error*>(&e);
    const int code = error ? static_cast<int>(error->code()) : static_cast<int>(ExitCode::internal_error);
    const bool together = mpi::every_rank_failed(30.0);
    if (together && world.rank != 0) return code;
    std::cout << std::flush;
    std::cerr << "tilesim: " << (error ? "error: " : "internal error: ") << mpi::rank_label() << ": " << e.what() << "\n" << std::flush;
    if (together) return code;
    mpi::abort_all(error ? static_cast<int>(error->code()) : static_cast<int>(ExitCode::internal_error));
  }
}

}  // namespace tilesim::cli
