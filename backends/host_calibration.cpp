#include "backends/host_calibration.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <thread>

#include "common/error.hpp"
#include "common/host_info.hpp"
#include "common/wall_clock.hpp"

namespace tilesim::backends {

namespace {

using cpu_model::CalibrationResult;
using cpu_model::CpuMachine;
using cpu_model::Figure;

constexpr std::int64_t MiB = 1024 * 1024;

std::string rate_text(double value, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g G%s", value / 1e9, unit);
  return buf;
}

std::string this_host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "unknown-host";
  return buf;
}

// A machine name from the host name: letters, digits, '-' and '_' only.
std::string host_machine_name(const std::string& host) {
  std::string name = "host-";
  for (char c : host) name += ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-') ? c : '-';
  return name;
}

}  // namespace

void check_calibration_destination(const std::string& out) {
  std::error_code ec;
  const auto dir = std::filesystem::path(out).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(out, "", "a path whose directory tilesim can create (--out)", ec.message());
  const std::string target = std::filesystem::exists(out, ec) ? out : (dir.empty() ? std::string(".") : dir.string());
  if (::access(target.c_str(), W_OK) != 0)
    throw InputError(out, "", "a writable path for the CPU machine file (--out)", "no permission to write " + target);
}

HostCalibration calibrate_this_host(bool progress) {
  cpu_model::CalibrationOptions options;
  if (progress)
    std::cerr << "calibrate: measuring this host with all cores (streaming bandwidth, random gather, peak FLOP/s, matmul "
                 "peaks in float32/bfloat16/float16), a few seconds ...\n";
  HostCalibration c;
  c.result = cpu_model::calibrate_host(options);
  c.host = this_host_name();
  c.machine = machine_from_calibration(c.result, host_machine_name(c.host), c.host, host_cpu_model_name(),
                                       static_cast<std::int64_t>(std::thread::hardware_concurrency()), utc_now(),
                                       std::string("tilesim ") + TILESIM_VERSION);
  c.document = cpu_model::to_json(c.machine);
  return c;
}

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

}  // namespace tilesim::backends
