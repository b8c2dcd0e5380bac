#include "kernels/cpu/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

namespace tilesim::kernels::cpu {

nlohmann::json TimingStats::to_json() const {
  nlohmann::json j = {{"median_s", median_s}, {"min_s", min_s},     {"max_s", max_s},     {"p25_s", p25_s},
                      {"p75_s", p75_s},       {"warmup", warmup}, {"repeats", repeats}};
  if (threads > 0) {
    j["threads"] = threads;
    j["team_threads"] = team_threads;
    j["disturbed"] = disturbed;
    j["checks"] = checks;
  }
  return j;
}

TimingStats time_calls(const std::function<void()>& fn, int warmup, int repeats) {
  if (warmup < 0) throw std::invalid_argument("time_calls: warmup must be >= 0, found " + std::to_string(warmup));
  if (repeats < 1) throw std::invalid_argument("time_calls: repeats must be >= 1, found " + std::to_string(repeats));
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> samples_s;
  samples_s.reserve(static_cast<std::size_t>(repeats));
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    const auto stop = std::chrono::steady_clock::now();
    samples_s.push_back(std::chrono::duration<double>(stop - start).count());
  }
  return summarise(std::move(samples_s), warmup);
}

TimingStats summarise(std::vector<double> samples_s, int warmup) {
  if (samples_s.empty()) throw std::invalid_argument("summarise: no samples");
  std::vector<double> sorted = samples_s;
  std::sort(sorted.begin(), sorted.end());
  // Quantile q at position q * (n - 1) of the sorted samples, interpolated linearly between neighbours
  // (numpy's default "linear" method), so the median of an even count is the mean of the middle two.
  auto quantile = [&sorted](double q) {
    const double position = q * static_cast<double>(sorted.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(position));
    const std::size_t above = std::min(below + 1, sorted.size() - 1);
    const double fraction = position - static_cast<double>(below);
    return sorted[below] + fraction * (sorted[above] - sorted[below]);
  };
  TimingStats stats;
  stats.warmup = warmup;
  stats.repeats = static_cast<int>(sorted.size());
  stats.median_s = quantile(0.5);
  stats.min_s = sorted.front();
  stats.max_s = sorted.back();
  stats.p25_s = quantile(0.25);
  stats.p75_s = quantile(0.75);
  stats.samples_s = std::move(samples_s);
  return stats;
}

}  // namespace tilesim::kernels::cpu
