#pragma once
// Timing on a shared host: time_calls (warm-up, repeats, median) with the disturbance detector
// (disturbance.hpp) around it, and what to do when it fires. Another process holding a core makes a
// parallel kernel's calls quantise to the scheduler's slice (milliseconds for microseconds of work), so
// a disturbed measurement is taken again, then on the cores left free, and what is still disturbed is
// flagged rather than passed on as a speed.
#include <functional>

#include "kernels/cpu/disturbance.hpp"
#include "kernels/cpu/timing.hpp"

namespace tilesim::kernels::cpu {

// One measurement on one thread count, with the usage over its timed calls and the verdict on it.
struct Attempt {
  TimingStats stats;
  UsageWindow window;
  DisturbanceVerdict verdict;
};

// The policy, apart from the measuring so that it can be tested with scripted attempts:
//   1. measure on `team` threads; clean: kept.
//   2. measure on `team` again (other work may have been a passing burst); clean: kept.
//   3. measure on fallback_threads(team, last verdict), then on 1 thread if that is still disturbed: the
//      cores left free; a clean measurement there is kept, with the thread count it ran on.
//   4. none clean: the attempt with the lowest median (the least disturbed) is kept and flagged.
// Returns the kept attempt's stats with threads, team_threads, disturbed ("" when clean) and checks (every attempt:
// threads, median_s, wall_s, process_cpu_s, run_queue_wait_s, disturbed) set. Throws
// std::invalid_argument for team < 1.
TimingStats guard_measurement(int team, const std::function<Attempt(int threads)>& measure);

// time_calls under that policy. `threads`: the thread count the calls use as things stand;
// `set_threads(n)` makes them use n (omp_set_num_threads for the CPU kernels, ATen's pool size for
// torch-cpu). The team is `threads` capped at host_cores_available(); set_threads is called only to change
// it, and the count is restored before returning, also when `fn` throws. On a quiet host this costs two
// usage readings (tens of microseconds) per op and nothing inside the timed calls.
TimingStats time_calls_guarded(const std::function<void()>& fn, int warmup, int repeats, int threads,
                               const std::function<void(int)>& set_threads);

}  // namespace tilesim::kernels::cpu
