#include "apps/calibration_machine.hpp"

#include <cstdio>

namespace tilesim::cpu_model {

namespace {

constexpr std::int64_t MiB = 1024 * 1024;

std::string rate_text(double value, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g G%s", value / 1e9, unit);
  return buf;
}

}  // namespace

CpuMachine machine_from_calibration(const CalibrationResult& r, const std::string& name, const std::string& hostname,
                                    const std::string& cpu_model, std::int64_t logical_cpus, const std::string& measured_utc,
                                    const std::string& tool) {
  CpuMachine m;
  m.name = name;
  m.description = cpu_model + " (" + std::to_string(logical_cpus) + " logical CPUs) on host " + hostname +
                  ": ceilings measured by `tilesim calibrate` with " + std::to_string(r.threads) + " OpenMP threads";
  m.hostname = hostname;
  m.cpu_model = cpu_model;
  m.logical_cpus = logical_cpus;
  m.threads = r.threads;
  m.measured_utc = measured_utc;
  m.tool = tool;
  const std::string where = "measured by `" + tool + " calibrate` on host " + hostname + " (" + cpu_model + ", " +
                            std::to_string(r.threads) + " OpenMP threads) at " + measured_utc + ": ";
  const std::string best = ", best of " + std::to_string(r.details.value("trials", 0)) + " trials";
  const std::string ws = std::to_string(r.working_set_bytes / MiB) + " MiB";
  m.dram_stream_bytes_per_s = {r.stream_bytes_per_s, where + "STREAM triad over three " + ws + " double arrays (" +
                                                         rate_text(r.stream_bytes_per_s, "B/s") + best + ")"};
  m.dram_random_gather_bytes_per_s = {r.gather_bytes_per_s,
                                      where + "64-byte rows gathered by uniform random int32 indices from a " + ws +
                                          " table, index + row read + row written counted (" +
                                          rate_text(r.gather_bytes_per_s, "B/s") + best + ")"};
  if (r.llc_stream_bytes_per_s > 0)
    m.llc_stream_bytes_per_s = Figure{r.llc_stream_bytes_per_s,
                                      where + "STREAM triad over three " + std::to_string(r.llc_working_set_bytes / 1024) +
                                          " KiB double arrays, within the " + std::to_string(r.last_level_cache_bytes / MiB) +
                                          " MiB last-level cache, each trial at least 20 ms of passes (" +
                                          rate_text(r.llc_stream_bytes_per_s, "B/s") + best + ")"};
  m.peak_flops_per_s["float32"] = {r.float32_flops_per_s, where + "independent float32 FMA chains in registers (" +
                                                              rate_text(r.float32_flops_per_s, "FLOP/s") + best + ")"};
  m.peak_flops_per_s["float64"] = {r.float64_flops_per_s, where + "independent float64 FMA chains in registers (" +
                                                              rate_text(r.float64_flops_per_s, "FLOP/s") + best + ")"};
  for (const auto& [dtype, peak] : r.matmul_peaks) {
    if (peak.flops_per_s <= 0) continue;
    const std::int64_t size = peak.details.value("size", std::int64_t{0});
    const std::string n = std::to_string(size);
    m.matmul_peak_flops_per_s[dtype] = {
        {peak.flops_per_s, where + n + " x " + n + " @ " + n + " x " + n + " " + dtype + " matmul through " + peak.kernel + " (" +
                               peak.instruction_set + "; " + rate_text(peak.flops_per_s, "FLOP/s") + ", best of " +
                               std::to_string(peak.details.value("trials_flops_per_s", nlohmann::json::array()).size()) + " trials)"},
        peak.instruction_set,
        peak.kernel};
  }
  m.details = r.details;
  return m;
}

}  // namespace tilesim::cpu_model
