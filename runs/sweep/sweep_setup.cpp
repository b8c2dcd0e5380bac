#include "runs/sweep/sweep_setup.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "analysis/results_table.hpp"
#include "backends/registry.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/tool_identity.hpp"
#include "common/wall_clock.hpp"
#include "runs/sweep/rank_files.hpp"
#include "runs/sweep/sweep_identity.hpp"
#include "runs/sweep/sweep_machines.hpp"

namespace tilesim::runs::sweep {

namespace {

namespace fs = std::filesystem;

// The output directory, made if need be, and results.csv's path in it.
std::string prepare_results_path(const SweepRequest& args, const analysis::SweepSpec& spec, std::string& out_dir) {
  out_dir = args.out_dir.empty() ? "out/" + spec.name : args.out_dir;
  create_output_directory(out_dir, "a directory the results can be written to (--out)");
  return (fs::path(out_dir) / "results.csv").string();
}

// sweep.json beside results.csv: the resolved sweep, the tool and this run (with the resolved sweep's
// hash, which --resume checks).
void write_sweep_echo(const nlohmann::json& resolved, const SweepRequest& args, int ranks, const std::string& out_dir,
                      const std::string& csv_path) {
  nlohmann::json echo = resolved;
  echo["tool"] = tool_identity();
  echo["run"] = {{"started_utc", utc_now()},
                 {"jobs", args.jobs},
                 {"ranks", ranks},
                 {"resume", args.resume},
                 {"host", backends::host_machine_description()},
                 {"results_csv", csv_path},
                 {"spec_sha256", spec_sha256(resolved)},
                 // Which file, however it was named: --resume from elsewhere compares this.
                 {"source_file_canonical", canonical_sweep_file(args.sweep)}};
  write_file_atomically((fs::path(out_dir) / "sweep.json").string(), echo.dump(2) + "\n");
}

// The rank files an earlier sweep over MPI ranks left: merged into results.csv (--resume), removed
// (--overwrite), or a reason to refuse the folder (neither).
void settle_rank_files(const SweepRequest& args, const ResolvedSweep& sweep, const std::string& out_dir,
                       const std::string& csv_path) {
  const std::size_t leftovers = rank_files(out_dir).size();
  if (leftovers == 0) return;
  if (args.overwrite) {
    const std::size_t removed = remove_rank_files(out_dir);
    std::cerr << "sweep: removed " << removed << " rank file" << (removed == 1 ? "" : "s") << " of an earlier run ("
              << rank_dir(out_dir) << "; --overwrite)\n";
    return;
  }
  if (!args.resume) {
    if (fs::exists(csv_path)) return;  // done_points refuses it, naming results.csv
    throw InputError(rank_dir(out_dir), "",
                     "no rank files of an earlier sweep over MPI ranks, or --resume (merge them and continue) or "
                     "--overwrite (start again)",
                     std::to_string(leftovers) + " rank file" + (leftovers == 1 ? "" : "s"));
  }
  const MergeOutcome merged = merge_rank_files(out_dir, csv_path, sweep.points.size(),
                                                   [&sweep](const analysis::ResultRow& row) { return sweep_position(sweep, row); });
  std::cerr << "sweep: merged " << merged.rows << " rows of " << merged.files << " rank file" << (merged.files == 1 ? "" : "s")
            << " an earlier run left (" << rank_dir(out_dir) << ") into " << csv_path;
  if (merged.duplicates) std::cerr << "; " << merged.duplicates << " rows already there left out";
  if (merged.partial_lines)
    std::cerr << "; " << merged.partial_lines << " partial last line" << (merged.partial_lines == 1 ? "" : "s")
              << " dropped (a run stopped while writing it)";
  std::cerr << "\n";
}

}  // namespace

void check_sweep_arguments(const SweepRequest& args) {
  if (args.jobs != 0) limits::checked_option("--jobs", args.jobs, 1, limits::max_jobs);
  if (args.stop_after < 0) throw InputError("", "--stop-after", "an integer >= 0", std::to_string(args.stop_after));
  if (args.resume && args.overwrite) throw InputError("", "--resume", "either --resume or --overwrite", "both");
}

ResolvedSweep resolve_sweep(const SweepRequest& args, const nlohmann::json& document) {
  ResolvedSweep s;
  s.spec = analysis::parse_sweep(document, args.sweep);
  apply_command_line(s.spec, args.backends, args.verify);
  s.proportion = args.available_memory_proportion;
  s.backends = resolve_backends(s.spec);
  check_dtypes(s.spec, s.backends, args.sweep);
  check_host_memory(s.spec, s.backends);
  for (const auto& b : s.backends) s.names.push_back(b.name);
  s.resolved = analysis::to_json(s.spec);
  // A run-wide proportion changes every simulated plan: part of the sweep's identity (--resume checks it).
  if (s.proportion) s.resolved["available_memory_proportion"] = *s.proportion;
  s.points = analysis::SweepPoints(s.spec);
  return s;
}

std::optional<std::size_t> sweep_position(const ResolvedSweep& sweep, const analysis::ResultRow& row) {
  const auto b = std::find(sweep.names.begin(), sweep.names.end(), row.backend);
  if (b == sweep.names.end()) return std::nullopt;
  return sweep.points.index_of(row.op, row.shape, row.dtype, static_cast<std::size_t>(b - sweep.names.begin()), row.repeat);
}

SweepFolder open_folder(const SweepRequest& args, const ResolvedSweep& sweep, int ranks) {
  SweepFolder f;
  f.csv_path = prepare_results_path(args, sweep.spec, f.out_dir);
  // Nothing in the folder is read or written before the lock is held, and nothing is written before
  // every check has passed.
  f.lock = std::make_unique<OutputLock>(
      f.out_dir, "tilesim sweep " + args.sweep + (ranks > 1 ? " over " + std::to_string(ranks) + " MPI ranks" : ""));
  // Rows at stake: a results.csv with more than its header (a run killed between writing a new
  // results.csv and its sweep.json leaves the header alone, which belongs to no sweep yet), or rank files.
  std::error_code size_error;
  const bool rows_there = (fs::exists(f.csv_path) &&
                           fs::file_size(f.csv_path, size_error) > analysis::results_csv_header().size()) ||
                          !rank_files(f.out_dir).empty();
  if (args.resume && rows_there) check_same_sweep(f.out_dir, sweep.resolved);
  settle_rank_files(args, sweep, f.out_dir, f.csv_path);
  const DonePoints done = done_points(f.csv_path, sweep.points.size(),
                                      [&sweep](const analysis::ResultRow& row) { return sweep_position(sweep, row); },
                                      args.resume, args.overwrite);
  f.results = std::make_unique<ResultsFile>(f.csv_path);
  if (done.exists)
    f.results->continue_at(done.keep_bytes);
  else
    f.results->start_new();
  write_sweep_echo(sweep.resolved, args, ranks, f.out_dir, f.csv_path);
  std::vector<const Backend*> modeled;
  for (const auto& b : sweep.backends) modeled.push_back(b.backend.get());
  write_sweep_machines(f.out_dir, modeled);
  f.pending = pending_points(sweep.points, done.done, sweep.backends);
  print_plan(sweep.spec, sweep.points.size(), sweep.backends, f.pending, done.foreign_rows, f.csv_path);
  return f;
}

}  // namespace tilesim::runs::sweep
