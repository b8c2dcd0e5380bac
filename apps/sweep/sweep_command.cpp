// tilesim sweep SWEEP.json [--out DIR] [--jobs N] [--resume]: every point of a sweep file on every
// backend it names, in one process (the simulated machine is elaborated once), each finished point
// appended to results.csv at once (one write per row), so a kill loses nothing and --resume runs only
// the points not yet there. Format and columns: docs/sweep-format.md.
//
// --jobs N > 1 runs the simulated and modeled points in N worker processes (workers.hpp); the parent
// alone writes results.csv. Measured points then run in the parent after every worker has exited: a
// timing must not share the cores with anything.
#include <ctime>
#include <filesystem>
#include <iostream>

#include "workloads/sweep_spec.hpp"
#include "apps/commands.hpp"
#include "apps/memory_proportion.hpp"
#include "apps/report_writer.hpp"
#include "apps/sweep/loader_sweep.hpp"
#include "apps/sweep/point_runner.hpp"
#include "apps/sweep/progress.hpp"
#include "apps/sweep/output_lock.hpp"
#include "apps/sweep/results_file.hpp"
#include "apps/sweep/sweep_identity.hpp"
#include "apps/sweep/sweep_backends.hpp"
#include "apps/sweep/sweep_plan.hpp"
#include "apps/sweep/tally.hpp"
#include "apps/sweep/workers.hpp"
#include "apps/sweep/sweep_machines.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/strict_json.hpp"
#include "common/tool_identity.hpp"
#include "kernels/cpu/cpu_backend.hpp"

namespace tilesim::cli {

namespace {

namespace fs = std::filesystem;
using namespace sweep;

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

std::string shape_text(const OpShape& s) {
  return std::to_string(s.num_inputs) + "x" + std::to_string(s.num_features) + "->" + std::to_string(s.num_outputs);
}

void check_arguments(const SweepArgs& args) {
  limits::checked_option("--jobs", args.jobs, 1, limits::max_jobs);
  if (args.stop_after < 0) throw InputError("", "--stop-after", "an integer >= 0", std::to_string(args.stop_after));
  if (args.resume && args.overwrite) throw InputError("", "--resume", "either --resume or --overwrite", "both");
}

// The output directory, made if need be, and results.csv's path in it.
std::string prepare_results_path(const SweepArgs& args, const analysis::SweepSpec& spec, std::string& out_dir) {
  out_dir = args.out_dir.empty() ? "out/" + spec.name : args.out_dir;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir, "", "a directory the results can be written to (--out)", ec.message());
  return (fs::path(out_dir) / "results.csv").string();
}

// sweep.json beside results.csv: the resolved sweep, the tool and this run (with the resolved sweep's
// hash, which --resume checks).
void write_sweep_echo(const nlohmann::json& resolved, const SweepArgs& args, const std::string& out_dir,
                      const std::string& csv_path) {
  nlohmann::json echo = resolved;
  echo["tool"] = tool_identity();
  echo["run"] = {{"started_utc", utc_now()},
                 {"jobs", args.jobs},
                 {"resume", args.resume},
                 {"host", kernels::cpu::host_description()},
                 {"results_csv", csv_path},
                 {"spec_sha256", spec_sha256(resolved)}};
  write_file_atomically((fs::path(out_dir) / "sweep.json").string(), echo.dump(2) + "\n");
}

// The points that run in the parent, one after another; an error names the point and the rows
// already written.
void run_serially(const std::vector<analysis::SweepPoint>& points, PointRunner& runner,
                  const std::vector<std::string>& backend_names, Recorder& recorder, const std::string& csv_path) {
  for (const auto& p : points) {
    if (recorder.stopped()) break;
    const std::string what = backend_names[p.backend] + " " + p.op + " " + shape_text(p.shape);
    analysis::ResultRow row;
    try {
      row = runner.run(p);
    } catch (const Error& e) {
      recorder.progress().finish();
      throw Error(e.code(), what + ": " + e.what() + " (the rows before it are in " + csv_path + ")");
    }
    if (row.verified == "does-not-fit" || row.verified == "no") recorder.note_problem(what + ": " + runner.last_error());
    recorder.note_measurement(p.backend, what, row.threads, row.team_threads, row.disturbed);
    recorder.record(p.backend, analysis::results_csv_row(row), row.wall_s, row.verified, what);
  }
}

}  // namespace

int sweep_command(const SweepArgs& args) {
  const auto run_start = Clock::now();
  check_arguments(args);
  const nlohmann::json document = load_json_file(args.sweep);
  if (is_loader_sweep(document)) {
    if (!args.available_memory_proportion.empty())
      throw InputError("", "--available-memory-proportion", "a sweep of op points (not supported with a loader sweep yet)",
                       "--available-memory-proportion " + args.available_memory_proportion + " with " + args.sweep);
    return loader_sweep_command(args, document);
  }
  analysis::SweepSpec spec = analysis::parse_sweep(document, args.sweep);
  apply_command_line(spec, args.backends, args.verify);
  const std::optional<double> proportion = parse_memory_proportion_option(args.available_memory_proportion);
  std::vector<SweepBackendRun> backends = resolve_backends(spec);
  check_dtypes(spec, backends, args.sweep);
  check_host_memory(spec, backends);
  std::vector<std::string> names;
  for (const auto& b : backends) names.push_back(b.name);

  std::string out_dir;
  const std::string csv_path = prepare_results_path(args, spec, out_dir);
  // Nothing in the folder is read or written before the lock is held, and nothing is written before
  // every check has passed.
  const OutputLock lock(out_dir, "tilesim sweep " + args.sweep);
  nlohmann::json resolved = analysis::to_json(spec);
  // A run-wide proportion changes every simulated plan: part of the sweep's identity (--resume checks it).
  if (proportion) resolved["available_memory_proportion"] = *proportion;
  if (args.resume && fs::exists(csv_path)) check_same_sweep(out_dir, resolved);
  const auto points = analysis::expand_sweep(spec);
  const DonePoints done = done_points(csv_path, points, names, args.resume, args.overwrite);
  ResultsFile results(csv_path);
  if (done.exists)
    results.continue_at(done.keep_bytes);
  else
    results.start_new();
  write_sweep_echo(resolved, args, out_dir, csv_path);
  std::vector<const Backend*> modeled;
  for (const auto& b : backends) modeled.push_back(b.backend.get());
  write_sweep_machines(out_dir, modeled);

  const PendingPoints pending = pending_points(points, done.keys, backends);
  print_plan(spec, points.size(), backends, pending, done.foreign_rows, csv_path);
  warn_if_host_busy(backends, pending);
  std::cout << std::flush;

  PointRunner runner(spec, backends);
  runner.set_available_memory_proportion(proportion);
  std::vector<int> parallelism(backends.size(), 1);
  for (std::size_t b = 0; b < backends.size(); ++b) parallelism[b] = backends[b].measured ? 1 : args.jobs;
  Progress progress(pending.points.size(), backends.size(), pending.pending_per_backend, parallelism);
  Recorder recorder(results, progress, static_cast<std::size_t>(args.stop_after));

  std::vector<analysis::SweepPoint> parallel_points, serial_points;
  for (const auto& p : pending.points)
    (args.jobs > 1 && !backends[p.backend].measured ? parallel_points : serial_points).push_back(p);
  if (!parallel_points.empty()) run_in_workers(parallel_points, args.jobs, runner, names, recorder, csv_path);
  run_serially(serial_points, runner, names, recorder, csv_path);
  progress.finish();
  return print_summary(recorder, names, csv_path, run_start);
}

}  // namespace tilesim::cli
