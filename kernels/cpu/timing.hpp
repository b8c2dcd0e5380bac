#pragma once
// Timing of real kernels: warm-up calls, then repeated timed calls; the median is the headline and
// the spread is kept.
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

namespace tilesim::kernels::cpu {

struct TimingStats {
  int warmup = 0;
  int repeats = 0;
  double median_s = 0, min_s = 0, max_s = 0, p25_s = 0, p75_s = 0;
  std::vector<double> samples_s;
  nlohmann::json to_json() const;  // without the samples
};

// Calls `fn` `warmup` times untimed, then `repeats` times timed (steady clock, each call separately).
TimingStats time_calls(const std::function<void()>& fn, int warmup, int repeats);

// Median and quartiles of samples (linear interpolation between order statistics).
TimingStats summarise(std::vector<double> samples_s, int warmup);

}  // namespace tilesim::kernels::cpu
