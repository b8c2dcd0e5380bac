// tilesim sweep SWEEP.json [--out DIR] [--jobs N] [--resume]: every point of a sweep file on every
// backend it names, in one process (the simulated machine is elaborated once), each finished point
// appended to results.csv at once (one write per row), so a kill loses nothing and --resume runs only
// the points not yet there. Format and columns: docs/sweep-format.md.
//
// --jobs N > 1 (by default N is this host's cores) runs the simulated and modeled points in N worker
// processes (workers.hpp); the parent alone writes results.csv. Measured points then run in the parent
// after every worker has exited: a timing must not share the cores with anything.
//
// Started by mpirun on more than one rank, the points are split over the ranks (mpi_sweep.hpp).
#include "runs/sweep/run_sweep.hpp"

#include <algorithm>
#include <iostream>

#include "common/error.hpp"
#include "common/heap_reuse.hpp"
#include "common/host_info.hpp"
#include "common/limits.hpp"
#include "common/strict_json.hpp"
#include "mpi/world.hpp"
#include "runs/sweep/workload_sweep.hpp"
#include "runs/sweep/mpi_sweep.hpp"
#include "runs/sweep/point_runner.hpp"
#include "runs/sweep/progress.hpp"
#include "runs/sweep/rank_files.hpp"
#include "runs/sweep/run_points.hpp"
#include "runs/sweep/sweep_setup.hpp"
#include "runs/sweep/tally.hpp"

namespace tilesim::runs::sweep {

int default_jobs() { return static_cast<int>(std::min<std::int64_t>(host_cores_available(), limits::max_jobs)); }

int run_sweep(const SweepRequest& args_given) {
  keep_freed_heap_for_reuse();  // point after point builds and drops a program
  // Under mpirun: over the ranks when there are several (a world of one is a plain sweep).
  if (mpi::launched_by_mpi()) {
    if (!mpi::built_with_mpi()) {
      if (const auto code = refuse_ranks_without_mpi()) return *code;
    } else if (mpi::world().size > 1) {
      return mpi_sweep_command(args_given);
    }
  }
  const auto run_start = Clock::now();
  check_sweep_arguments(args_given);
  const nlohmann::json document = load_json_file(args_given.sweep);
  if (is_workload_sweep(document)) {
    if (args_given.available_memory_proportion)
      throw InputError("", "--available-memory-proportion", "a sweep of op points (not supported with a workload sweep yet)",
                       "--available-memory-proportion " + nlohmann::json(*args_given.available_memory_proportion).dump() + " with " + args_given.sweep);
    return workload_sweep_command(args_given, document);
  }
  SweepRequest args = args_given;
  if (args.jobs == 0) args.jobs = default_jobs();
  ResolvedSweep sweep = resolve_sweep(args, document);
  SweepFolder folder = open_folder(args, sweep, 1);
  warn_if_host_busy(sweep.backends, folder.pending);
  std::cout << std::flush;

  PointRunner runner(sweep.spec, sweep.backends);
  runner.set_available_memory_proportion(sweep.proportion);
  std::vector<int> parallelism(sweep.backends.size(), 1);
  bool parallel = false;
  for (std::size_t b = 0; b < sweep.backends.size(); ++b) {
    parallelism[b] = sweep.backends[b].measured ? 1 : args.jobs;
    parallel = parallel || (parallelism[b] > 1 && folder.pending.pending_per_backend[b] > 0);
  }
  if (parallel) {
    std::cerr << "sweep: the simulated and modeled points in " << args.jobs << " worker processes"
              << (args_given.jobs == 0 ? " (this host's cores; --jobs 1 for one process)" : "") << "\n";
  }
  Progress progress(folder.pending.points.size(), sweep.backends.size(), folder.pending.pending_per_backend, parallelism);
  Recorder recorder(*folder.results, progress, static_cast<std::size_t>(args.stop_after));
  run_points(sweep.points, folder.pending.points, args.jobs, sweep.backends, runner, recorder, folder.csv_path);
  progress.finish();
  // Workers append rows as they finish them; a sweep that ran to its end reads back in sweep order.
  if (args.jobs > 1 && !recorder.stopped()) {
    const auto position = [&sweep](const analysis::ResultRow& row) { return sweep_position(sweep, row); };
    if (put_rows_in_sweep_order(folder.csv_path, position, limits::max_results_csv_bytes) == RowOrder::too_large) {
      std::cerr << "sweep: results.csv is larger than " << limits::max_results_csv_bytes
                << " bytes: its rows stay in the order the workers finished them\n";
    }
  }
  return print_summary(recorder, sweep.names, folder.csv_path, run_start);
}

}  // namespace tilesim::runs::sweep
