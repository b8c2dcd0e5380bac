#include "runs/sweep/tally.hpp"

#include <iomanip>
#include <iostream>
#include <sstream>

#include "common/error.hpp"

namespace tilesim::runs::sweep {

void Recorder::record(std::size_t backend, const std::string& csv_line, double wall_s, const std::string& verified,
                      const std::string& what) {
  results_.append(csv_line);
  ++tally_.rows;
  tally_.wall_by_backend[backend] += wall_s;
  ++tally_.rows_by_backend[backend];
  if (verified == "does-not-fit") ++tally_.does_not_fit;
  if (verified == "no") ++tally_.failed;
  progress_.point_done(backend, wall_s, what);
  if (stop_after_ && tally_.rows >= stop_after_) stopped_ = true;
}

void Recorder::note_measurement(std::size_t backend, const std::string& what, std::optional<int> threads,
                                std::optional<int> team_threads, const std::string& disturbed) {
  if (threads && team_threads && *threads < *team_threads) ++tally_.fewer_threads_by_backend[backend];
  if (disturbed.empty()) return;
  ++tally_.disturbed;
  tally_.last_disturbed = what + ": " + disturbed;
}

void add_tally(Tally& into, const Tally& more) {
  into.rows += more.rows;
  into.does_not_fit += more.does_not_fit;
  into.failed += more.failed;
  into.disturbed += more.disturbed;
  for (const auto& [b, s] : more.wall_by_backend) into.wall_by_backend[b] += s;
  for (const auto& [b, n] : more.rows_by_backend) into.rows_by_backend[b] += n;
  for (const auto& [b, n] : more.fewer_threads_by_backend) into.fewer_threads_by_backend[b] += n;
  if (into.last_problem.empty()) into.last_problem = more.last_problem;
  if (into.last_disturbed.empty()) into.last_disturbed = more.last_disturbed;
}

namespace {

std::string points_per_s_text(double rate) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(rate < 10 ? 2 : 1) << rate;
  return s.str();
}

}  // namespace

int print_summary(const Recorder& recorder, const std::vector<std::string>& backend_names, const std::string& csv_path,
                  Clock::time_point run_start) {
  return print_summary(recorder.tally(), recorder.stopped(), backend_names, csv_path, run_start);
}

int print_summary(const Tally& tally, bool stopped, const std::vector<std::string>& backend_names, const std::string& csv_path,
                  Clock::time_point run_start) {
  if (stopped) {
    std::cout << "sweep: stopped after " << tally.rows << " new points (--stop-after); continue with --resume\n";
    return 0;
  }
  // Points per second of wall time, the figure a design-space study plans by.
  const double run_s = seconds_since(run_start);
  std::cout << "sweep: " << tally.rows << " new rows in " << duration_text(run_s) << ", "
            << points_per_s_text(run_s > 0 ? static_cast<double>(tally.rows) / run_s : 0.0) << " points/s (" << csv_path << ")\n";
  for (const auto& [b, n] : tally.rows_by_backend)
    std::cout << "  " << std::left << std::setw(28) << backend_names[b] << std::right << std::setw(6) << n << " points, "
              << std::fixed << std::setprecision(2) << tally.wall_by_backend.at(b) << " s of host time ("
              << std::setprecision(2) << 1e3 * tally.wall_by_backend.at(b) / static_cast<double>(n) << " ms/point)\n";
  for (const auto& [b, fewer] : tally.fewer_threads_by_backend)
    std::cout << "  " << backend_names[b] << ": " << fewer
              << " points timed on fewer threads than their team, the cores other work left free (results.csv columns "
                 "threads, team_threads)\n";
  if (tally.disturbed)
    std::cout << "  " << tally.disturbed
              << " measured points stayed DISTURBED by other work on the host (results.csv column disturbed; reports "
                 "mark them), e.g. "
              << tally.last_disturbed << "\n";
  if (tally.does_not_fit)
    std::cout << "  " << tally.does_not_fit << " points do not fit their machine (verified = does-not-fit), e.g. "
              << tally.last_problem << "\n";
  if (tally.failed) {
    std::cout << "  " << tally.failed << " points FAILED verification, e.g. " << tally.last_problem << "\n";
    return static_cast<int>(ExitCode::internal_error);
  }
  return tally.does_not_fit ? static_cast<int>(ExitCode::does_not_fit) : 0;
}

}  // namespace tilesim::runs::sweep
