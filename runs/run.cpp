#include "runs/run.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "backends/registry.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "mpi/world.hpp"
#include "runs/forward_run.hpp"
#include "runs/minibatch_run.hpp"
#include "runs/scaling_run.hpp"
#include "sim/engine.hpp"

namespace tilesim::runs {

namespace {

// A number as report.json writes it (0.5, not 0.500000), for messages about typed options.
std::string number_text(double x) { return nlohmann::json(x).dump(); }

// The counts a caller may ask for, each within what a run may take.
void check_counts(const RunRequest& r) {
  limits::checked_option("--repeats", r.repeats, 1, limits::max_timed_calls);
  limits::checked_option("--warmup", r.warmup, 0, limits::max_warmup_calls);
  if (r.batches) limits::checked_option("--batches", *r.batches, 1, limits::max_steps);
  if (r.available_memory_proportion && !(*r.available_memory_proportion > 0 && *r.available_memory_proportion <= 1))
    throw InputError("", "--available-memory-proportion",
                     "a number greater than 0 and at most 1 (the share of a tile's SRAM an op's temporaries may use)",
                     "\"" + number_text(*r.available_memory_proportion) + "\"");
}

// The options checked against the workload (--batches, --trace, --steps and the proportion need the
// sections they apply to) and the backends against a training step; the training steps to run (0 for
// a forward pass).
std::int64_t checked_steps(const RunRequest& r) {
  const workloads::Workload& workload = r.workload;
  const bool training = workload.model && workload.model->train;
  const bool loader = workload.model && workload.model->loader;
  if (r.batches && !loader)
    throw InputError(r.workload_file, "loader", "a \"loader\" section for --batches to apply to", "a workload without one");
  if (loader && !r.trace_path.empty())
    throw InputError("", "--trace", "no --trace with a \"loader\" (a trace is of one step: run one batch's graph without the loader)",
                     "--trace " + r.trace_path);
  if (workload.available_memory_proportion && loader)
    throw InputError("", "--available-memory-proportion", "a workload without a \"loader\" (not supported with mini-batches yet)",
                     "--available-memory-proportion " + number_text(*workload.available_memory_proportion));
  if (r.steps && loader)
    throw InputError("", "--steps", "--batches for a workload with a loader (one step per batch)", "--steps " + std::to_string(*r.steps));
  if (r.steps && !training)
    throw InputError(r.workload_file, "train", "a \"train\" section for --steps to apply to", "a workload without one");
  if (r.steps) limits::checked_option("--steps", *r.steps, 1, limits::max_steps);
  if (training) {
    // The registry says which families run training steps, so this message follows it.
    std::string runs, forward_only;
    for (const backends::BackendFamily* f : backends::all_families()) {
      std::string& list = f->info().runs_training_steps ? runs : forward_only;
      list += (list.empty() ? "" : ", ") + f->info().family;
    }
    for (const auto& s : r.backends)
      if (!s.descriptor->info().runs_training_steps)
        throw InputError(r.workload_file, "train",
                         "backends that run training steps (" + runs + "; " + forward_only + " run forward passes only so far)",
                         s.name() + " in --backends");
  }
  return training ? r.steps.value_or(workload.model->train->steps) : 0;
}

// A parallel run reports one step of every replica, on one device's backend: no trace, no step or
// batch counts, no values from the caller.
void check_parallel(const RunRequest& r) {
  if (!r.trace_path.empty())
    throw InputError("", "--trace", "no --trace with a \"parallel\" section (a trace is of one device's step: run the workload without it)",
                     "--trace " + r.trace_path);
  if (r.steps || r.batches)
    throw InputError("", r.steps ? "--steps" : "--batches",
                     "no --steps or --batches with a \"parallel\" section (a scaling run reports one step of every replica)",
                     r.steps ? "--steps " + std::to_string(*r.steps) : "--batches " + std::to_string(*r.batches));
  if (r.set_inputs)
    throw InputError(r.workload_file, "parallel",
                     "input values made device by device (values cannot be given for a workload with a \"parallel\" section)", "values given");
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

// --trace needs a backend that writes traces, and a path it can write.
void check_trace(const RunRequest& r) {
  if (r.trace_path.empty() || !r.lead) return;
  const bool any = std::any_of(r.backends.begin(), r.backends.end(),
                               [](const backends::BackendSpec& s) { return s.descriptor->info().writes_traces; });
  if (!any) {
    std::string writers;
    for (const backends::BackendFamily* f : backends::all_families())
      if (f->info().writes_traces) writers += (writers.empty() ? "" : ", ") + f->info().family;
    throw InputError("", "--trace", "a backend that writes traces (" + writers + ") in --backends", "none in \"" + r.backends_text + "\"");
  }
  check_writable(r.trace_path, "the trace (--trace)");
}

// Under mpirun: what the engine's spreading over the ranks did (sums over ranks; every rank must call
// this, since it adds over them), said by the lead rank beside the run's progress.
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

}  // namespace

RunResult run(RunRequest request) {
  check_counts(request);
  if (request.seed) request.workload.seed = *request.seed;
  if (request.available_memory_proportion) request.workload.available_memory_proportion = request.available_memory_proportion;
  const std::int64_t steps = checked_steps(request);
  const bool loader = request.workload.model && request.workload.model->loader;

  // A "parallel" section: each backend as a system of devices, one device's step and the links between
  // them (runs/scaling_run.hpp), reported under "scaling".
  if (request.workload.parallel) {
    check_parallel(request);
    if (request.ready) request.ready();
    return run_scaling(request);
  }

  // Every backend made (machine files are read here) before any work, so bad input fails fast.
  std::vector<std::unique_ptr<Backend>> backends;
  for (const auto& s : request.backends) backends.push_back(backends::make_backend(s));
  check_trace(request);
  if (loader && request.set_inputs)
    throw InputError(request.workload_file, "loader",
                     "input values made batch by batch (values cannot be given for a workload with a \"loader\")", "values given");
  if (request.ready) request.ready();
  RunResult result = loader ? run_loader(request, backends) : run_forward(request, std::move(backends), steps);
  report_rank_spread(request.progress && request.lead);
  return result;
}

}  // namespace tilesim::runs
