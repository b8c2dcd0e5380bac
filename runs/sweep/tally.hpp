#pragma once
// What a sweep has recorded: every finished point appended to results.csv and counted per backend (as
// it happens, so --stop-after can stop the run), then the summary and the exit code.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runs/sweep/progress.hpp"
#include "runs/sweep/results_file.hpp"

namespace tilesim::runs::sweep {

struct Tally {
  std::size_t rows = 0, does_not_fit = 0, failed = 0;
  std::map<std::size_t, double> wall_by_backend;
  std::map<std::size_t, std::size_t> rows_by_backend;
  std::string last_problem;
  // Measured points (kernels/cpu/guarded_timing.hpp): those still disturbed by other work after
  // re-measuring, one of them named, and per backend those timed on fewer threads than their team.
  std::size_t disturbed = 0;
  std::string last_disturbed;
  std::map<std::size_t, std::size_t> fewer_threads_by_backend;
};

class Recorder {
 public:
  // `stop_after`: stop once this many new rows are recorded (0: never).
  Recorder(ResultsFile& results, Progress& progress, std::size_t stop_after)
      : results_(results), progress_(progress), stop_after_(stop_after) {}

  // Appends the row (`csv_line` ends in '\n') and counts it.
  void record(std::size_t backend, const std::string& csv_line, double wall_s, const std::string& verified,
              const std::string& what);
  // The point that did not fit or failed verification, named in the summary.
  void note_problem(const std::string& what) { tally_.last_problem = what; }
  // A measured point's thread count and disturbance (results.csv's threads and disturbed), for the summary.
  void note_measurement(std::size_t backend, const std::string& what, std::optional<int> threads, std::optional<int> team_threads,
                        const std::string& disturbed);

  bool stopped() const { return stopped_; }
  const Tally& tally() const { return tally_; }
  Progress& progress() { return progress_; }

 private:
  ResultsFile& results_;
  Progress& progress_;
  std::size_t stop_after_;
  Tally tally_;
  bool stopped_ = false;
};

// The lines after the last point (new rows and host time per backend, points that did not fit or
// failed, measured points that ran on fewer threads or stayed disturbed) and the exit code: 1 when a point failed verification, 3 when one did not fit, else 0.
int print_summary(const Recorder& recorder, const std::vector<std::string>& backend_names, const std::string& csv_path,
                  Clock::time_point run_start);
// The same from a tally (a sweep over MPI ranks: every rank's, added up); `stopped`: --stop-after ended it.
int print_summary(const Tally& tally, bool stopped, const std::vector<std::string>& backend_names, const std::string& csv_path,
                  Clock::time_point run_start);

// Adds `more` into `into`: counts and host times summed; a named example kept from `into` when it has one.
void add_tally(Tally& into, const Tally& more);

}  // namespace tilesim::runs::sweep
