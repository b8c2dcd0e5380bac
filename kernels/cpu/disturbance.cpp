#include "kernels/cpu/disturbance.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>

namespace tilesim::kernels::cpu {
namespace {

// Run-queue wait of every thread of this process, in ns by thread id: the second field of
// /proc/self/task/TID/schedstat ("on-cpu ns, run-queue wait ns, slices"). Empty when the kernel has no
// schedstat (CONFIG_SCHED_INFO off) or /proc is not mounted. Plain POSIX reads: this runs around every
// measured op, so it must stay at a few microseconds per thread.
std::map<long, long long> run_queue_wait_by_thread_ns() {
  std::map<long, long long> waits;
  DIR* dir = ::opendir("/proc/self/task");
  if (!dir) return waits;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    char path[320];  // d_name is at most 255 bytes
    std::snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", entry->d_name);
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // the thread ended while we looked
    char text[128];
    const ssize_t n = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    if (n <= 0) continue;
    text[n] = '\0';
    long long on_cpu_ns = 0, wait_ns = 0;
    if (std::sscanf(text, "%lld %lld", &on_cpu_ns, &wait_ns) == 2) waits[std::strtol(entry->d_name, nullptr, 10)] = wait_ns;
  }
  ::closedir(dir);
  return waits;
}

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * share);
  return buf;
}

std::string microseconds(double s) {
  char buf[32];
  if (s >= 1e-3) std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.3g us", s * 1e6);
  return buf;
}

double process_cpu_s() {
  timespec t{};
  if (::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0) return 0;
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

UsageReading read_usage() {
  UsageReading r;
  r.wait_ns_by_thread = run_queue_wait_by_thread_ns();
  if (!r.wait_ns_by_thread.empty()) {
    long long total_ns = 0;
    for (const auto& [tid, ns] : r.wait_ns_by_thread) total_ns += ns;
    r.run_queue_wait_s = 1e-9 * static_cast<double>(total_ns);
  }
  r.process_cpu_s = process_cpu_s();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return r;
}

UsageWindow usage_between(const UsageReading& before, const UsageReading& after) {
  UsageWindow w;
  w.wall_s = std::max(0.0, after.wall_s - before.wall_s);
  w.process_cpu_s = std::max(0.0, after.process_cpu_s - before.process_cpu_s);
  if (before.run_queue_wait_s && after.run_queue_wait_s) {
    // Per thread: one that ended in between is left out (its wait would read as negative), one that
    // started counts from zero.
    long long wait_ns = 0;
    for (const auto& [tid, ns] : after.wait_ns_by_thread) {
      const auto it = before.wait_ns_by_thread.find(tid);
      wait_ns += std::max(0LL, ns - (it == before.wait_ns_by_thread.end() ? 0LL : it->second));
    }
    w.run_queue_wait_s = 1e-9 * static_cast<double>(wait_ns);
  }
  return w;
}

DisturbanceVerdict judge_disturbance(const TimingStats& stats, const UsageWindow& window) {
  DisturbanceVerdict v;
  if (window.run_queue_wait_s && window.wall_s > 0) {
    const double wait_s = *window.run_queue_wait_s;
    v.cores_lost = wait_s / window.wall_s;
    if (v.cores_lost > kWaitShareLimit && wait_s > kWaitFloorS) {
      v.disturbed = true;
      v.reason = "threads waited for a core " + microseconds(wait_s) + " in " + microseconds(window.wall_s) + " (" +
                 percent(v.cores_lost) + " of a core lost to other work)";
      return v;
    }
  }
  if (!window.run_queue_wait_s && window.wall_s > kWaitFloorS && window.process_cpu_s < kCpuShareFloor * window.wall_s) {
    v.disturbed = true;
    v.cores_lost = 1.0 - window.process_cpu_s / window.wall_s;
    v.reason = "the process ran " + percent(window.process_cpu_s / window.wall_s) + " of " + microseconds(window.wall_s) +
               " (other work held its cores)";
    return v;
  }
  if (stats.repeats >= kSpreadMinRepeats && stats.median_s >= kSpreadFloorS && stats.p25_s > 0 &&
      stats.p75_s > kSpreadLimit * stats.p25_s) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "repeats spread: p75 %.2fx p25", stats.p75_s / stats.p25_s);
    v.disturbed = true;
    v.reason = buf;
  }
  return v;
}

int fallback_threads(int threads, const DisturbanceVerdict& verdict) {
  if (threads <= 1) return 1;
  const int lost = std::max(1, static_cast<int>(std::ceil(verdict.cores_lost - 1e-9)));
  return std::clamp(threads - lost, 1, threads - 1);
}

}  // namespace tilesim::kernels::cpu
