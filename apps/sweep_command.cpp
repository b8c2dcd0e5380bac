// tilesim sweep SWEEP.json [--out DIR] [--jobs N] [--resume] [--backends ...]: the command's options,
// checked into a sweep request for runs/sweep/run_sweep.hpp, which runs it.
#include <memory>

#include "apps/cli_checks.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "apps/memory_proportion.hpp"
#include "common/limits.hpp"
#include "runs/sweep/run_sweep.hpp"

namespace tilesim::cli {

int sweep_command(const SweepArgs& args) {
  runs::sweep::SweepRequest request;
  request.sweep = args.sweep;
  request.out_dir = args.out_dir;
  request.jobs = args.jobs;
  request.resume = args.resume;
  request.overwrite = args.overwrite;
  request.backends = args.backends;
  request.verify = args.verify;
  request.stop_after = args.stop_after;
  request.available_memory_proportion = parse_memory_proportion_option(args.available_memory_proportion);
  return runs::sweep::run_sweep(request);
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
                        "Worker processes for the simulated and modeled points (each its own simulator; default: "
                        "this host's cores, 1 for a workload sweep or per MPI rank); measured CPU points always run alone")
      ->check(integer_in(1, limits::max_jobs));
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
