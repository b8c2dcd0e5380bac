#pragma once
// What a sweep has recorded: every finished point appended to results.csv and counted per backend (as
// it happens, so --stop-after can stop the run), then the summary and the exit code.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "apps/sweep/progress.hpp"
#include "apps/sweep/results_file.hpp"

namespace tilesim::cli::sweep {

struct Tally {
  std::size_t rows = 0, does_not_fit = 0, failed = 0;
  std::map<std::size_t, double> wall_by_backend;
  std::map<std::size_t, std::size_t> rows_by_backend;
  std::string last_problem;
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
// failed) and the exit code: 1 when a point failed verification, 3 when one did not fit, else 0.
int print_summary(const Recorder& recorder, const std::vector<std::string>& backend_names, const std::string& csv_path,
                  Clock::time_point run_start);

}  // namespace tilesim::cli::sweep
