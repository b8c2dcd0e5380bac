// tilesim run WORKLOAD.json: the run itself is runs/run.hpp's; this command reads the options, writes
// report.json and prints the summary (or the report, with --json).
//
// Under `mpirun -n K`, every rank runs this same command on the same inputs (runs/run.hpp); rank 0
// alone prints and writes files (report, trace), the others run silently beside it.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "apps/cli_checks.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "apps/memory_proportion.hpp"
#include "backends/registry.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "mpi/world.hpp"
#include "runs/run.hpp"
#include "sim/engine.hpp"
#include "workloads/workload.hpp"

namespace tilesim::cli {

namespace {

// The command on this process; `lead` prints and writes files (rank 0, or the one process).
int run_workload(const RunArgs& args, bool lead) {
  runs::RunRequest request;
  request.backends = backends::parse_backend_list(args.backends);
  request.workload = workloads::load_workload(args.workload);
  request.workload_file = args.workload;
  request.backends_text = args.backends;
  request.seed = args.seed;
  request.available_memory_proportion = parse_memory_proportion_option(args.available_memory_proportion);
  request.timing_only = args.timing_only;
  request.warmup = args.warmup;
  request.repeats = args.repeats;
  request.steps = args.steps;
  request.batches = args.batches;
  request.trace_path = args.trace;
  request.progress = !args.json;
  request.lead = lead;
  const std::string out_dir = args.out_dir.empty() ? "out/" + request.workload.name : args.out_dir;
  const std::string report_path = (std::filesystem::path(out_dir) / "report.json").string();
  request.ready = [&] {
    if (lead) create_output_directory(out_dir, "a directory the report can be written to (--out)");
  };

  const runs::RunResult result = runs::run(std::move(request));
  const std::string report_text = result.report.dump(2);
  if (lead) write_file_atomically(report_path, report_text + "\n");
  if (args.json)
    std::cout << report_text << std::endl;
  else
    std::cout << result.summary << runs::files_text(result, report_path, args.trace);
  if (lead && result.all_verified) std::cerr << runs::refusal_text(result, report_path) << std::flush;
  return result.exit_code();
}

}  // namespace

int run_command(const RunArgs& args) {
  const mpi::World& world = mpi::world();
  if (world.size < 2) return run_workload(args, true);
  sim::Engine::spread_over_mpi_ranks(true);
  if (world.rank != 0 && std::freopen("/dev/null", "w", stdout) == nullptr) {
    throw Error(ExitCode::internal_error, "cannot silence standard output on " + mpi::rank_label());
  }
  try {
    return run_workload(args, world.rank == 0);
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
    // One write: mpirun's own lines about the abort must not land inside this one.
    std::cerr << (std::string("tilesim: ") + (error ? "error: " : "internal error: ") + mpi::rank_label() + ": " + e.what() + "\n")
              << std::flush;
    if (together) return code;
    mpi::abort_all(error ? static_cast<int>(error->code()) : static_cast<int>(ExitCode::internal_error));
  }
}

// The subcommand's options on the command line (apps/command_line.hpp).
void add_run_command(CLI::App& app, std::vector<Command>& commands) {
  struct Options {
    RunArgs run;
    std::int64_t seed = 0, steps = 0, batches = 0;
  };
  const auto o = std::make_shared<Options>();
  RunArgs& run = o->run;
  std::int64_t& seed = o->seed;
  auto* run_cmd = app.add_subcommand("run", "Run a workload on the chosen backends and write report.json");
  run_cmd->add_option("workload", run.workload, "Workload JSON file (format: docs/workload-format.md)")->required();
  run_cmd->add_option("--backends", run.backends, backends::backends_help_text())->capture_default_str();
  run_cmd->add_option("--out", run.out_dir, "Directory for report.json (default out/<workload name>/)")
      ->check(non_empty_path("a directory"));
  run_cmd->add_flag("--json", run.json, "Print the report JSON on stdout instead of the table");
  run_cmd->add_option("--trace", run.trace, "Write a Chrome/Perfetto trace of the simulated run to this file")
      ->check(non_empty_path("a file"));
  run_cmd->add_flag("--timing-only", run.timing_only, "Simulate cycles without moving real bytes (outputs not verified)");
  auto* seed_opt = run_cmd->add_option("--seed", seed, "Override the workload's random seed")->check(integer_in(0, limits::max_seed));
  run_cmd->add_option("--warmup", run.warmup, "Untimed calls before timing measured backends")
      ->check(integer_in(0, limits::max_warmup_calls))
      ->capture_default_str();
  run_cmd->add_option("--repeats", run.repeats, "Timed calls of measured backends (median reported)")
      ->check(integer_in(1, limits::max_timed_calls))
      ->capture_default_str();
  std::int64_t& steps = o->steps;
  auto* steps_opt = run_cmd->add_option("--steps", steps, "Training workloads: steps to run (overrides the workload's train.steps)")
                        ->check(integer_in(1, limits::max_steps));
  std::int64_t& batches = o->batches;
  auto* batches_opt = run_cmd->add_option("--batches", batches,
                                          "Workloads with a loader: batches to run, one step each (overrides loader.batches; default one epoch)")
                          ->check(integer_in(1, limits::max_steps));
  run_cmd->add_option("--available-memory-proportion", run.available_memory_proportion,
                      "Simulated IPU: share of a tile's SRAM, in (0, 1], each op's plan may use for temporaries (PopTorch's "
                      "setAvailableMemoryProportion; an op's own available_memory_proportion wins; default the machine file's)");
  commands.push_back({run_cmd, [o, seed_opt, steps_opt, batches_opt] {
    if (*seed_opt) o->run.seed = checked_seed(o->seed);
    if (*steps_opt) o->run.steps = o->steps;
    if (*batches_opt) o->run.batches = o->batches;
    return run_command(o->run);
  }});
}

}  // namespace tilesim::cli
