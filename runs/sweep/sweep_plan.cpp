#include "runs/sweep/sweep_plan.hpp"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <thread>

#include "analysis/results_table.hpp"

namespace tilesim::runs::sweep {

PendingPoints pending_points(const analysis::SweepPoints& points, const std::vector<bool>& done,
                             const std::vector<SweepBackendRun>& backends) {
  PendingPoints pending;
  pending.per_backend = points.per_backend();
  pending.per_backend.resize(backends.size(), 0);
  pending.pending_per_backend = pending.per_backend;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!done.empty() && done[i]) {
      --pending.pending_per_backend[points.backend_of(i)];
      continue;
    }
    pending.points.push_back(i);
  }
  return pending;
}

namespace {

std::string list_text(const std::vector<std::int64_t>& v) {
  std::string s;
  for (auto x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// Share of the CPUs' time other processes used over a fifth of a second (this one sleeps meanwhile),
// from /proc/stat; 0 when it cannot be read. The load average would still count work that just ended.
double other_cpu_share() {
  auto sample = [](double& busy, double& total) {
    std::ifstream stat("/proc/stat");
    std::string cpu;
    double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
    busy = user + nice + system + irq + softirq + steal;
    total = busy + idle + iowait;
    return static_cast<bool>(stat) && cpu == "cpu";
  };
  double b0 = 0, t0 = 0, b1 = 0, t1 = 0;
  if (!sample(b0, t0)) return 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  if (!sample(b1, t1) || t1 <= t0) return 0;
  return (b1 - b0) / (t1 - t0);
}

}  // namespace

void print_plan(const analysis::SweepSpec& spec, std::size_t total_points, const std::vector<SweepBackendRun>& backends,
                const PendingPoints& pending, std::size_t foreign_rows, const std::string& csv_path) {
  std::cout << "sweep " << spec.name << ": " << total_points << " points (" << spec.ops.size() << " ops x grid x "
            << spec.repeats << " repeat" << (spec.repeats > 1 ? "s" : "") << ") -> " << csv_path << "\n";
  for (std::size_t b = 0; b < backends.size(); ++b) {
    const auto& sb = spec.backends[b];
    std::cout << "  " << std::left << std::setw(28) << backends[b].name << std::right << std::setw(6) << pending.per_backend[b]
              << " points, " << backends[b].spec.descriptor->plan_text(backends[b].spec, backends[b].timing);
    if (sb.subset)
      std::cout << "; subset: num_inputs {" << list_text(sb.num_inputs) << "}, num_features {" << list_text(sb.num_features)
                << "}, num_outputs {" << list_text(sb.num_outputs) << "}";
    if (pending.pending_per_backend[b] != pending.per_backend[b])
      std::cout << " (" << pending.per_backend[b] - pending.pending_per_backend[b] << " already in results.csv)";
    std::cout << "\n";
  }
  if (foreign_rows) std::cout << "  (" << foreign_rows << " rows of results.csv are not points of this sweep; kept)\n";
}

void warn_if_host_busy(const std::vector<SweepBackendRun>& backends, const PendingPoints& pending) {
  bool measuring = false;
  for (std::size_t b = 0; b < backends.size(); ++b) measuring = measuring || (backends[b].measured && pending.pending_per_backend[b] > 0);
  if (!measuring) return;
  const double busy = other_cpu_share();
  if (busy > 0.25)
    std::cerr << "sweep: warning: other processes keep " << std::fixed << std::setprecision(0) << 100 * busy << "% of the "
              << sysconf(_SC_NPROCESSORS_ONLN) << " CPUs busy: the measured CPU times will be slow and noisy\n"
              << std::defaultfloat;
}

}  // namespace tilesim::runs::sweep
