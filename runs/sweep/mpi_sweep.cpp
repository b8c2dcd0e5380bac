#include "runs/sweep/mpi_sweep.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <new>

#include "common/error.hpp"
#include "common/strict_json.hpp"
#include "mpi/world.hpp"
#include "runs/sweep/workload_sweep.hpp"
#include "runs/sweep/point_runner.hpp"
#include "runs/sweep/progress.hpp"
#include "runs/sweep/rank_comm.hpp"
#include "runs/sweep/rank_files.hpp"
#include "runs/sweep/rank_share.hpp"
#include "runs/sweep/run_points.hpp"
#include "runs/sweep/sweep_identity.hpp"
#include "runs/sweep/sweep_setup.hpp"
#include "runs/sweep/tally.hpp"

namespace tilesim::runs::sweep {

namespace {

namespace fs = std::filesystem;

int exit_code_of(const std::exception& e) {
  if (const auto* error = dynamic_cast<const Error*>(&e)) return static_cast<int>(error->code());
  return static_cast<int>(ExitCode::internal_error);
}

// After the plan is out every rank is inside the job's collectives, so a failure anywhere ends them
// all at once (a rank that just returned would leave the others waiting for it).
[[noreturn]] void end_job(const std::string& message, int exit_code) {
  std::cout << std::flush;
  // One write: mpirun's own lines about the abort must not land inside this one.
  std::cerr << ("tilesim: error: " + mpi::rank_label() + ": " + message + "\n") << std::flush;
  mpi::abort_all(exit_code);
}

// What rank 0 decided, for the others: the status (0, or the exit code rank 0 ends with, having said
// why), then the indices (in sweep order) of the points still to run.
std::vector<std::int64_t> plan_message(int status, const PendingPoints* pending) {
  std::vector<std::int64_t> message{status};
  if (status != 0) return message;
  for (const std::size_t i : pending->points) message.push_back(static_cast<std::int64_t>(i));
  return message;
}

// One rank's account of its share, as numbers for the gather: the tally's counts, whether
// --stop-after stopped it, how long the share took, then per backend host seconds, rows and points
// timed on fewer threads.
std::vector<double> pack(const Tally& t, bool stopped, double share_s, std::size_t backends) {
  std::vector<double> v{static_cast<double>(t.rows), static_cast<double>(t.does_not_fit), static_cast<double>(t.failed),
                        static_cast<double>(t.disturbed), stopped ? 1.0 : 0.0, share_s};
  for (std::size_t b = 0; b < backends; ++b) {
    v.push_back(t.wall_by_backend.count(b) ? t.wall_by_backend.at(b) : 0.0);
    v.push_back(static_cast<double>(t.rows_by_backend.count(b) ? t.rows_by_backend.at(b) : 0));
    v.push_back(static_cast<double>(t.fewer_threads_by_backend.count(b) ? t.fewer_threads_by_backend.at(b) : 0));
  }
  return v;
}

Tally unpack(const std::vector<double>& v, std::size_t backends, const std::string& examples) {
  auto count = [](double x) { return static_cast<std::size_t>(std::llround(x)); };
  Tally t;
  t.rows = count(v[0]);
  t.does_not_fit = count(v[1]);
  t.failed = count(v[2]);
  t.disturbed = count(v[3]);
  for (std::size_t b = 0; b < backends; ++b) {
    const std::size_t rows = count(v[6 + 3 * b + 1]), fewer = count(v[6 + 3 * b + 2]);
    if (rows) {
      t.rows_by_backend[b] = rows;
      t.wall_by_backend[b] = v[6 + 3 * b];
    }
    if (fewer) t.fewer_threads_by_backend[b] = fewer;
  }
  const auto nul = examples.find('\0');
  t.last_problem = examples.substr(0, nul);
  if (nul != std::string::npos) t.last_disturbed = examples.substr(nul + 1);
  return t;
}

// The launcher binds each rank to cores (Open MPI: one core each for 2 ranks or fewer); the measured
// points would then run their OpenMP team on rank 0's cores alone, unlike a one-process sweep.
void warn_if_bound(std::size_t measured_points) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (measured_points == 0 || ::sched_getaffinity(0, sizeof set, &set) != 0) return;
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  const int usable = CPU_COUNT(&set);
  if (online > 0 && usable < online)
    std::cerr << "sweep: warning: rank 0 may use " << usable << " of this host's " << online
              << " CPUs (the MPI launcher bound it): the measured points run on " << usable
              << " thread" << (usable == 1 ? "" : "s") << "; start mpirun with --bind-to none to time them on the whole host\n";
}

struct ShareOutcome {
  Tally tally;
  bool stopped = false;
  double seconds = 0;
};

// This rank's share of the simulated and modeled points, each row appended to its rank file.
ShareOutcome run_share(const SweepRequest& args, const ResolvedSweep& sweep, const std::vector<std::size_t>& share,
                       PointRunner& runner, const std::string& out_dir) {
  const mpi::World& world = mpi::world();
  const auto start = Clock::now();
  ShareOutcome outcome;
  if (share.empty()) return outcome;
  const std::string path = rank_file_path(out_dir, world.rank);
  if (!fs::is_directory(rank_dir(out_dir)))
    throw InputError(rank_dir(out_dir), "",
                     "the rank folder rank 0 made (on several hosts, --out must be on a filesystem every rank sees at "
                     "the same path)",
                     "no such folder on this rank's host");
  std::vector<std::size_t> per_backend(sweep.backends.size(), 0);
  for (const std::size_t i : share) ++per_backend[sweep.points.backend_of(i)];
  Progress progress(share.size(), sweep.backends.size(), per_backend, std::vector<int>(sweep.backends.size(), args.jobs));
  if (world.rank == 0)
    progress.set_label(mpi::rank_label() + "'s share");
  else
    progress.silence();
  const FileHold hold(path, true);
  ResultsFile file(path);
  file.continue_at(whole_line_bytes(path));
  Recorder recorder(file, progress, static_cast<std::size_t>(args.stop_after));
  run_points(sweep.points, share, args.jobs, sweep.backends, runner, recorder, path);
  progress.finish();
  outcome.tally = recorder.tally();
  outcome.stopped = recorder.stopped();
  outcome.seconds = seconds_since(start);
  return outcome;
}

// Rank 0 says how the points are split.
void print_split(std::size_t shared, std::size_t measured, const std::string& out_dir) {
  const int ranks = mpi::world().size;
  std::cout << "sweep over " << ranks << " MPI ranks: " << shared << " simulated and modeled points, interleaved (rank r runs "
            << "points r, r+" << ranks << ", ...: " << shared / static_cast<std::size_t>(ranks) << " to "
            << (shared + static_cast<std::size_t>(ranks) - 1) / static_cast<std::size_t>(ranks)
            << " each), rows in " << rank_dir(out_dir) << "/rank-R.csv until merged into results.csv";
  if (measured) std::cout << "; " << measured << " measured points on rank 0 alone, after the others";
  std::cout << "\n" << std::flush;
}

// Rank 0, once every share is done: the balance of the shares.
void print_balance(const std::vector<std::vector<double>>& accounts) {
  double slowest = 0, fastest = 0, sum = 0;
  std::size_t slowest_rank = 0;
  for (std::size_t r = 0; r < accounts.size(); ++r) {
    const double s = accounts[r][5];
    if (r == 0 || s > slowest) {
      slowest = s;
      slowest_rank = r;
    }
    if (r == 0 || s < fastest) fastest = s;
    sum += s;
  }
  std::cout << "sweep: the " << accounts.size() << " ranks' shares took " << std::fixed << std::setprecision(2) << fastest
            << " to " << slowest << " s (mean " << sum / static_cast<double>(accounts.size()) << " s; slowest rank "
            << slowest_rank << ")\n"
            << std::defaultfloat;
}

}  // namespace

std::optional<int> refuse_ranks_without_mpi() {
  auto number = [](std::initializer_list<const char*> names) -> long {
    for (const char* n : names)
      if (const char* v = std::getenv(n)) return std::atol(v);
    return -1;
  };
  const long size = number({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"});
  if (size <= 1) return std::nullopt;
  if (number({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) != 0) return static_cast<int>(ExitCode::bad_input);
  throw InputError("", "mpirun", "a tilesim built with MPI to split a sweep over ranks (CMake found no MPI when this one "
                                 "was built: install libopenmpi-dev and rebuild, or run the sweep without mpirun)",
                   std::to_string(size) + " ranks");
}

int mpi_sweep_command(const SweepRequest& args_given) {
  const auto run_start = Clock::now();
  SweepRequest args = args_given;
  if (args.jobs == 0) args.jobs = 1;  // the ranks share the host's cores already
  const mpi::World& world = mpi::world();
  const bool root = world.rank == 0;

  // Rank 0 takes the folder and decides what is left; the others resolve the sweep meanwhile, and
  // report a failure of their own only when rank 0 found none (bad input is then said once).
  std::optional<ResolvedSweep> sweep;
  std::optional<SweepFolder> folder;
  std::string failure;
  int failure_code = 0;
  std::vector<std::int64_t> plan;
  if (root) {
    try {
      check_sweep_arguments(args);
      const nlohmann::json document = load_json_file(args.sweep);
      if (is_workload_sweep(document))
        throw InputError("", "mpirun", "a sweep of op points (a workload sweep runs in one process: start it without mpirun)",
                         std::to_string(world.size) + " ranks");
      sweep.emplace(resolve_sweep(args, document));
      folder.emplace(open_folder(args, *sweep, world.size));
      std::error_code ec;
      fs::create_directories(rank_dir(folder->out_dir), ec);
      if (ec) throw InputError(rank_dir(folder->out_dir), "", "a folder for the ranks' files", ec.message());
      plan = plan_message(0, &folder->pending);
    } catch (const std::exception& e) {
      ranks::broadcast_from_root(std::vector<std::int64_t>{exit_code_of(e)});
      throw;
    }
  } else {
    try {
      check_sweep_arguments(args);
      const nlohmann::json document = load_json_file(args.sweep);
      if (!is_workload_sweep(document)) sweep.emplace(resolve_sweep(args, document));
    } catch (const std::exception& e) {
      failure = e.what();
      failure_code = exit_code_of(e);
    }
  }
  plan = ranks::broadcast_from_root(plan);
  if (plan.at(0) != 0) return static_cast<int>(plan[0]);  // rank 0 said why
  const std::string sha = ranks::broadcast_from_root(root ? spec_sha256(sweep->resolved) : std::string());
  if (!failure.empty()) end_job(failure, failure_code);
  if (!sweep) end_job(args.sweep + ": read a batch-size sweep where rank 0 read a sweep of op points: every rank must see the same sweep file",
                      static_cast<int>(ExitCode::bad_input));
  if (spec_sha256(sweep->resolved) != sha)
    end_job(args.sweep + ": read another sweep than rank 0 did (resolved spec sha256 " + spec_sha256(sweep->resolved).substr(0, 12) +
                " here, " + sha.substr(0, 12) + " on rank 0): every rank must see the same sweep file",
            static_cast<int>(ExitCode::bad_input));

  // The split: the simulated and modeled points interleaved over the ranks, the measured ones kept
  // for rank 0 alone at the end.
  std::vector<std::size_t> shared, measured;
  for (std::size_t i = 1; i < plan.size(); ++i) {
    const auto point = static_cast<std::size_t>(plan[i]);
    (sweep->backends[sweep->points.backend_of(point)].measured ? measured : shared).push_back(point);
  }
  const std::string out_dir = root ? folder->out_dir : (args.out_dir.empty() ? "out/" + sweep->spec.name : args.out_dir);
  if (root) print_split(shared.size(), measured.size(), out_dir);

  std::optional<PointRunner> runner;
  ShareOutcome share;
  try {
    runner.emplace(sweep->spec, sweep->backends);
    runner->set_available_memory_proportion(sweep->proportion);
    share = run_share(args, *sweep, rank_share(shared, world.rank, world.size), *runner, out_dir);
  } catch (const std::exception& e) {
    end_job(std::string(e.what()) + "; every rank's finished rows are in " + rank_dir(out_dir) + ", rerun with --resume",
            exit_code_of(e));
  }

  const std::size_t backends = sweep->backends.size();
  const auto accounts = ranks::gather_to_root(pack(share.tally, share.stopped, share.seconds, backends));
  const auto examples = ranks::gather_to_root(share.tally.last_problem + '\0' + share.tally.last_disturbed);
  if (!root) return static_cast<int>(ranks::broadcast_from_root(std::vector<std::int64_t>{}).at(0));

  int code = 0;
  try {
    Tally total;
    bool stopped = false;
    for (std::size_t r = 0; r < accounts.size(); ++r) {
      add_tally(total, unpack(accounts[r], backends, examples[r]));
      stopped = stopped || accounts[r][4] != 0;
    }
    print_balance(accounts);
    folder->results.reset();  // the merge replaces results.csv
    const MergeOutcome merged = merge_rank_files(out_dir, folder->csv_path, sweep->points.size(),
                                                   [&](const analysis::ResultRow& row) { return sweep_position(*sweep, row); });
    std::cout << "sweep: merged " << merged.rows << " rows of " << merged.files << " rank files into " << folder->csv_path
              << "\n";
    if (!measured.empty() && !stopped) {
      warn_if_host_busy(sweep->backends, folder->pending);
      warn_if_bound(measured.size());
      std::vector<std::size_t> per_backend(backends, 0);
      for (const std::size_t i : measured) ++per_backend[sweep->points.backend_of(i)];
      Progress progress(measured.size(), backends, per_backend, std::vector<int>(backends, 1));
      progress.set_label("measured points on rank 0");
      ResultsFile results(folder->csv_path);
      results.continue_at(fs::file_size(folder->csv_path));  // the merge wrote whole lines
      Recorder recorder(results, progress, args.stop_after > 0 ? static_cast<std::size_t>(args.stop_after) : 0);
      run_points(sweep->points, measured, 1, sweep->backends, *runner, recorder, folder->csv_path);
      progress.finish();
      add_tally(total, recorder.tally());
      stopped = stopped || recorder.stopped();
    }
    code = print_summary(total, stopped, sweep->names, folder->csv_path, run_start);
    std::cout << std::flush;
  } catch (const std::exception& e) {
    end_job(e.what(), exit_code_of(e));
  }
  ranks::broadcast_from_root(std::vector<std::int64_t>{code});
  return code;
}

}  // namespace tilesim::runs::sweep
