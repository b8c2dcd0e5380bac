#pragma once
// Timing of real kernels: warm-up calls, then repeated timed calls; the median is the headline and
// the spread is kept. On a shared host, guarded_timing.hpp re-measures what other work disturbed.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tilesim::kernels::cpu {

struct TimingStats {
  int warmup = 0;
  int repeats = 0;
  double median_s = 0, min_s = 0, max_s = 0, p25_s = 0, p75_s = 0;
  std::vector<double> samples_s;
  // Set by time_calls_guarded (guarded_timing.hpp), 0 / empty otherwise: the OpenMP threads the timed
  // calls ran on and the team they would have used on a quiet host (fewer: other work held cores), why
  // the measurement is still not to be trusted ("" when it is), and every attempt's readings (JSON array).
  int threads = 0;
  int team_threads = 0;
  std::string disturbed;
  nlohmann::json checks = nlohmann::json::array();
  nlohmann::json to_json() const;  // without the samples; threads, disturbed and checks only when guarded
};

// Calls `fn` `warmup` times untimed, then `repeats` times timed (steady clock, each call separately).
TimingStats time_calls(const std::function<void()>& fn, int warmup, int repeats);

// Median and quartiles of samples (linear interpolation between order statistics).
TimingStats summarise(std::vector<double> samples_s, int warmup);

}  // namespace tilesim::kernels::cpu
