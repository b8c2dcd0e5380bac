// tilesim sweep SWEEP.json [--out DIR] [--jobs N] [--resume]: every point of a sweep file on every
// backend it names, in one process (the simulated machine is elaborated once), each finished point
// appended to results.csv at once (one write per row), so a kill loses nothing and --resume runs only
// the points not yet there. Format and columns: docs/sweep-format.md.
//
// --jobs N > 1 runs the simulated and modeled points in N worker processes (workers.hpp); the parent
// alone writes results.csv. Measured points then run in the parent after every worker has exited: a
// timing must not share the cores with anything.
//
// Started by mpirun on more than one rank, the points are split over the ranks (mpi_sweep.hpp).
#include <cstdlib>
#include <iostream>
#include <memory>

#include "apps/cli_checks.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "apps/sweep/loader_sweep.hpp"
#include "apps/sweep/mpi_sweep.hpp"
#include "apps/sweep/point_runner.hpp"
#include "apps/sweep/progress.hpp"
#include "apps/sweep/run_points.hpp"
#include "apps/sweep/sweep_setup.hpp"
#include "apps/sweep/tally.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/strict_json.hpp"
#include "mpi/world.hpp"

namespace tilesim::cli {

using namespace sweep;

int sweep_command(const SweepArgs& args) {
  // Under mpirun: over the ranks when there are several (a world of one is a plain sweep).
  if (mpi::launched_by_mpi()) {
    if (!mpi::built_with_mpi()) {
      if (const auto code = refuse_ranks_without_mpi()) return *code;
    } else if (mpi::world().size > 1) {
      return mpi_sweep_command(args);
    }
  }
  const auto run_start = Clock::now();
  check_sweep_arguments(args);
  const nlohmann::json document = load_json_file(args.sweep);
  if (is_loader_sweep(document)) {
    if (!args.available_memory_proportion.empty())
      throw InputError("", "--available-memory-proportion", "a sweep of op points (not supported with a loader sweep yet)",
                       "--available-memory-proportion " + args.available_memory_proportion + " with " + args.sweep);
    return loader_sweep_command(args, document);
  }
  ResolvedSweep sweep = resolve_sweep(args, document);
  SweepFolder folder = open_folder(args, sweep, 1);
  warn_if_host_busy(sweep.backends, folder.pending);
  std::cout << std::flush;

  PointRunner runner(sweep.spec, sweep.backends);
  runner.set_available_memory_proportion(sweep.proportion);
  std::vector<int> parallelism(sweep.backends.size(), 1);
  for (std::size_t b = 0; b < sweep.backends.size(); ++b) parallelism[b] = sweep.backends[b].measured ? 1 : args.jobs;
  Progress progress(folder.pending.points.size(), sweep.backends.size(), folder.pending.pending_per_backend, parallelism);
  Recorder recorder(*folder.results, progress, static_cast<std::size_t>(args.stop_after));
  run_points(sweep.points, folder.pending.points, args.jobs, sweep.backends, runner, recorder, folder.csv_path);
  progress.finish();
  return print_summary(recorder, sweep.names, folder.csv_path, run_start);
}

// The subcommand's options on the command line (apps/command_line.hpp).
void add_sweep_command(CLI::App& app, std::vector<Command>& commands) {
  struct Options {
    SweepArgs sweep;
    std::string sweep_backends;
  };
  const auto o = std::make_shared<Options>();
  SweepArgs& sweep = o->sweep;
  auto* sweep_cmd = app.add_subcommand(
      "sweep", "Run every point of a sweep file on its backends, appending each to results.csv (docs/sweep-format.md)");
  sweep_cmd->add_option("sweep", sweep.sweep, "Sweep JSON file (format: docs/sweep-format.md)")->required();
  sweep_cmd->add_option("--out", sweep.out_dir, "Directory for results.csv and sweep.json (default out/<sweep name>/)")
      ->check(non_empty_path("a directory"));
  sweep_cmd->add_option("--jobs", sweep.jobs,
                        "Worker processes for the simulated and modeled points (each its own simulator); measured CPU "
                        "points always run alone")
      ->check(integer_in(1, limits::max_jobs))
      ->capture_default_str();
  sweep_cmd->add_flag("--resume", sweep.resume, "Continue results.csv: run only the points not yet in it");
  sweep_cmd->add_flag("--overwrite", sweep.overwrite, "Start a new results.csv even if one exists");
  std::string& sweep_backends = o->sweep_backends;
  auto* sweep_backends_opt =
      sweep_cmd->add_option("--backends", sweep_backends, "Comma-separated backends replacing the sweep file's (full grid each)");
  sweep_cmd->add_flag("--verify", sweep.verify, "Simulated IPU: functional runs with outputs checked, instead of timing-only");
  sweep_cmd->add_option("--available-memory-proportion", sweep.available_memory_proportion,
                        "Simulated IPU: share of a tile's SRAM, in (0, 1], each point's plan may use for temporaries "
                        "(default the machine file's)");
  // For tests: stop as if killed after N new points (group "" hides it from the help).
  sweep_cmd->add_option("--stop-after", sweep.stop_after, "Stop after N new points")
      ->check(integer_in(0, std::numeric_limits<std::int64_t>::max()))
      ->group("");
  commands.push_back({sweep_cmd, [o, sweep_backends_opt] {
    if (*sweep_backends_opt) o->sweep.backends = o->sweep_backends;  // given, even if empty (then refused)
    return sweep_command(o->sweep);
  }});
}

}  // namespace tilesim::cli
