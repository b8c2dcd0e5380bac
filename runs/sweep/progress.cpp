#include "runs/sweep/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace tilesim::runs::sweep {

std::string duration_text(double s) {
  std::ostringstream out;
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) out << std::fixed << std::setprecision(s < 10 ? 1 : 0) << s << " s";
  else if (s < 3600) out << static_cast<int>(s / 60) << " min " << static_cast<int>(std::fmod(s, 60)) << " s";
  else out << static_cast<int>(s / 3600) << " h " << static_cast<int>(std::fmod(s, 3600) / 60) << " min";
  return out.str();
}

Progress::Progress(std::size_t total, std::size_t backends, std::vector<std::size_t> remaining, std::vector<int> parallelism)
    : total_(total),
      remaining_(std::move(remaining)),
      parallelism_(std::move(parallelism)),
      wall_(backends, 0.0),
      done_by_(backends, 0),
      tty_(isatty(STDERR_FILENO) == 1) {}

void Progress::point_done(std::size_t backend, double wall_s, const std::string& what) {
  ++done_;
  wall_[backend] += wall_s;
  ++done_by_[backend];
  if (remaining_[backend] > 0) --remaining_[backend];
  if (silent_) return;
  const double elapsed = seconds_since(start_);
  const std::string label = label_.empty() ? "" : label_ + ": ";
  if (tty_) {
    // A tenth of a second between redraws: live enough, and cheap beside thousands of points.
    if (done_ != total_ && seconds_since(last_draw_) < 0.1) return;
    last_draw_ = Clock::now();
    constexpr int width = 24;
    const int filled = total_ ? static_cast<int>(width * done_ / total_) : width;
    std::cerr << "\r\033[K[" << std::string(static_cast<std::size_t>(filled), '#')
              << std::string(static_cast<std::size_t>(width - filled), '.') << "] " << label << done_ << "/" << total_ << " "
              << rate_eta(elapsed) << "  " << what << std::flush;
    return;
  }
  const std::size_t step = std::max<std::size_t>(1, total_ / 10);
  if (done_ % step == 0 || done_ == total_)
    std::cerr << "sweep: " << label << done_ << "/" << total_ << " points (" << std::fixed << std::setprecision(0)
              << 100.0 * static_cast<double>(done_) / static_cast<double>(total_) << "%), " << rate_eta(elapsed) << "\n";
}

void Progress::finish() {
  if (tty_ && done_ > 0 && !silent_) std::cerr << "\n";
}

// Rate over this run; ETA from each backend's own mean point time (a simulated point and a modeled
// one differ by orders of magnitude), divided by the processes running it.
std::string Progress::rate_eta(double elapsed) const {
  double eta = 0, all_wall = 0;
  std::size_t all_done = 0;
  for (std::size_t b = 0; b < wall_.size(); ++b) {
    all_wall += wall_[b];
    all_done += done_by_[b];
  }
  for (std::size_t b = 0; b < wall_.size(); ++b) {
    const double mean = done_by_[b] ? wall_[b] / static_cast<double>(done_by_[b])
                                    : (all_done ? all_wall / static_cast<double>(all_done) : 0.0);
    eta += static_cast<double>(remaining_[b]) * mean / std::max(1, parallelism_[b]);
  }
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << (elapsed > 0 ? static_cast<double>(done_) / elapsed : 0.0)
    << " points/s, ETA " << duration_text(eta);
  return s.str();
}

}  // namespace tilesim::runs::sweep
