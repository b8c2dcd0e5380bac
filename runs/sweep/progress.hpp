#pragma once
// A sweep's progress on stderr: a redrawn bar on a terminal, plain lines (every 10 %) otherwise, with
// the rate and an ETA from each backend's own mean point time.
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "common/wall_clock.hpp"

namespace tilesim::runs::sweep {

using Clock = std::chrono::steady_clock;

// "4.2 s", "3 min 12 s", "1 h 5 min"; "?" for a negative or non-finite time.
std::string duration_text(double s);

class Progress {
 public:
  // `remaining`: points still to run per backend; `parallelism`: processes running each backend's points.
  Progress(std::size_t total, std::size_t backends, std::vector<std::size_t> remaining, std::vector<int> parallelism);

  void point_done(std::size_t backend, double wall_s, const std::string& what);
  // A sweep over MPI ranks: `label` ("rank 0 of 4's share") opens each line; a silent progress counts
  // but prints nothing (the ranks other than 0, so that stderr stays one account).
  void set_label(std::string label) { label_ = std::move(label); }
  void silence() { silent_ = true; }
  // Ends the bar's line on a terminal; call before any other output once points have run.
  void finish();

 private:
  std::string rate_eta(double elapsed) const;

  std::size_t total_, done_ = 0;
  std::vector<std::size_t> remaining_;
  std::vector<int> parallelism_;
  std::vector<double> wall_;
  std::vector<std::size_t> done_by_;
  bool tty_;
  std::string label_;
  bool silent_ = false;
  Clock::time_point start_ = Clock::now(), last_draw_ = Clock::now() - std::chrono::seconds(1);
};

}  // namespace tilesim::runs::sweep
