#pragma once
// Whether a timing was disturbed by other work on the host. On a shared host a busy core holds an
// OpenMP worker for whole scheduler slices, so a call of microseconds measures milliseconds (the team
// waits at its barrier for the worker), and every repeat can be equally wrong. What says so, read
// around the timed calls: how long this process's threads sat runnable but without a core (the kernel's
// run-queue wait, /proc/self/task/*/schedstat; failing that, its CPU time against the wall time), and
// the spread of the repeats. The judgement is a pure
// function of those readings, so it is tested on synthetic figures.
#include <map>
#include <optional>
#include <string>

#include "kernels/cpu/timing.hpp"

namespace tilesim::kernels::cpu {

// Cumulative counters of this process at one moment.
struct UsageReading {
  double wall_s = 0;                       // steady clock
  double process_cpu_s = 0;                // CPU time of all its threads (CLOCK_PROCESS_CPUTIME_ID)
  std::optional<double> run_queue_wait_s;  // summed over its threads; nullopt where the kernel does not say
  std::map<long, long long> wait_ns_by_thread;  // the same by thread id, so a window counts only live threads
};

// What happened between two readings (the timed calls of one measurement).
struct UsageWindow {
  double wall_s = 0;
  double process_cpu_s = 0;
  std::optional<double> run_queue_wait_s;
};

UsageReading read_usage();
// after - before; a thread that ended in between is left out, one that started counts from zero.
UsageWindow usage_between(const UsageReading& before, const UsageReading& after);

// The thresholds of judge_disturbance, named so the tests and docs can quote them.
// A measurement is disturbed when its threads waited for a core more than this share of its wall time
// (summed over threads, so 0.5 reads as half a core lost on average) ...
constexpr double kWaitShareLimit = 0.10;
// ... and for more than this in all: single wake-ups of a sleeping worker cost a few microseconds each.
constexpr double kWaitFloorS = 50e-6;
// Where the kernel does not say (no schedstat): disturbed when the process got less CPU time than this
// share of the wall time. The calling thread runs or spins through every timed call, so a quiet
// measurement has at least one core's worth; a thread descheduled by other work, or sleeping at the
// team's barrier for a descheduled worker, has less.
constexpr double kCpuShareFloor = 0.5;
// Or when the middle half of the repeats spreads wider than this (p75 / p25), the quartiles taken only
// from this many repeats on and for medians above the floor (shorter calls spread with timer noise).
constexpr double kSpreadLimit = 1.5;
constexpr int kSpreadMinRepeats = 4;
constexpr double kSpreadFloorS = 20e-6;

struct DisturbanceVerdict {
  bool disturbed = false;
  std::string reason;     // "" when clean; what was seen otherwise, with the figures
  double cores_lost = 0;  // run-queue wait / wall: the cores the threads lacked on average
};

// Judges one measurement from its timings and the usage over its timed calls.
DisturbanceVerdict judge_disturbance(const TimingStats& stats, const UsageWindow& window);

// The OpenMP threads to measure with after a disturbed measurement on `threads`: the cores that were
// not lost (rounded down), at least 1 and fewer than `threads` (1 when `threads` is 1).
int fallback_threads(int threads, const DisturbanceVerdict& verdict);

}  // namespace tilesim::kernels::cpu
