#include "kernels/cpu/guarded_timing.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/host_info.hpp"

namespace tilesim::kernels::cpu {
namespace {

nlohmann::json check_json(const Attempt& a, int threads) {
  return {{"threads", threads},
          {"median_s", a.stats.median_s},
          {"wall_s", a.window.wall_s},
          {"process_cpu_s", a.window.process_cpu_s},
          {"run_queue_wait_s", a.window.run_queue_wait_s ? nlohmann::json(*a.window.run_queue_wait_s) : nlohmann::json(nullptr)},
          {"disturbed", a.verdict.reason}};
}

}  // namespace

TimingStats guard_measurement(int team, const std::function<Attempt(int threads)>& measure) {
  if (team < 1) throw std::invalid_argument("guard_measurement: team must be >= 1, found " + std::to_string(team));
  struct Tried {
    Attempt attempt;
    int threads;
  };
  std::vector<Tried> tried;
  nlohmann::json checks = nlohmann::json::array();
  auto keep = [&checks, team](Attempt a, int threads, std::string disturbed) {
    TimingStats s = std::move(a.stats);
    s.threads = threads;
    s.team_threads = team;
    s.disturbed = std::move(disturbed);
    s.checks = checks;
    return s;
  };
  auto attempt = [&](int threads) -> const Attempt& {
    tried.push_back({measure(threads), threads});
    checks.push_back(check_json(tried.back().attempt, threads));
    return tried.back().attempt;
  };

  // Steps 1 and 2: the whole team, twice at most.
  for (int i = 0; i < 2; ++i)
    if (!attempt(team).verdict.disturbed) return keep(tried.back().attempt, team, "");
  // Step 3: the cores left free, then one.
  if (team > 1) {
    const int free_cores = fallback_threads(team, tried.back().attempt.verdict);
    if (!attempt(free_cores).verdict.disturbed) return keep(tried.back().attempt, free_cores, "");
    if (free_cores > 1 && !attempt(1).verdict.disturbed) return keep(tried.back().attempt, 1, "");
  }
  // Step 4: still disturbed everywhere; keep the least disturbed, flagged.
  const auto best = std::min_element(tried.begin(), tried.end(), [](const Tried& a, const Tried& b) {
    return a.attempt.stats.median_s < b.attempt.stats.median_s;
  });
  const std::string why = best->attempt.verdict.reason + "; still disturbed after " + std::to_string(tried.size()) +
                          " measurements (" + std::to_string(team) + " down to " + std::to_string(tried.back().threads) +
                          " threads)";
  return keep(best->attempt, best->threads, why);
}

TimingStats time_calls_guarded(const std::function<void()>& fn, int warmup, int repeats, int threads,
                               const std::function<void(int)>& set_threads) {
  if (threads < 1) throw std::invalid_argument("time_calls_guarded: threads must be >= 1, found " + std::to_string(threads));
  // Puts the caller's thread count back however the measuring ends.
  struct Restore {
    const std::function<void(int)>& set;
    int original, current;
    ~Restore() {
      if (current != original) set(original);
    }
  } restore{set_threads, threads, threads};
  auto measure = [&](int n) {
    if (n != restore.current) {
      set_threads(n);
      restore.current = n;
    }
    for (int i = 0; i < warmup; ++i) fn();
    Attempt a;
    // The readings bracket the timed calls only: the warm-up wakes the workers (thread start-up is not
    // other work), and nothing is read between the timed calls.
    const UsageReading before = read_usage();
    a.stats = time_calls(fn, 0, repeats);
    const UsageReading after = read_usage();
    a.stats.warmup = warmup;
    a.window = usage_between(before, after);
    a.verdict = judge_disturbance(a.stats, a.window);
    return a;
  };
  return guard_measurement(std::min(threads, host_cores_available()), measure);
}

}  // namespace tilesim::kernels::cpu
