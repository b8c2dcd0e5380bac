// tilesim calibrate [--out FILE] [--json]: measures this host's ceilings (streaming and random-gather
// DRAM bandwidth, peak FLOP/s per dtype, all cores) in a few seconds and writes a CPU machine file
// (models/cpu/README.md) whose every figure says it was measured, when and on which host.
#include <unistd.h>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <thread>

#include "apps/calibration_machine.hpp"
#include "apps/cli_checks.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "backends/machine_ceilings.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/host_info.hpp"
#include "common/wall_clock.hpp"
#include "kernels/cpu/host_calibration.hpp"
#include "models/cpu/cpu_machine.hpp"

namespace tilesim::cli {

namespace {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "unknown-host";
  return buf;
}

// A machine name from the host name: letters, digits, '-' and '_' only.
std::string machine_name(const std::string& host) {
  std::string name = "host-";
  for (char c : host) name += ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-') ? c : '-';
  return name;
}

}  // namespace

int host_calibrate_command(const HostCalibrateArgs& args) {
  const std::string out = args.out_path.empty() ? backends::default_cpu_machine_file() : args.out_path;
  // Fail on an unwritable destination before spending the seconds of measurement.
  std::error_code ec;
  const auto dir = std::filesystem::path(out).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(out, "", "a path whose directory tilesim can create (--out)", ec.message());
  const std::string target = std::filesystem::exists(out, ec) ? out : (dir.empty() ? std::string(".") : dir.string());
  if (::access(target.c_str(), W_OK) != 0)
    throw InputError(out, "", "a writable path for the CPU machine file (--out)", "no permission to write " + target);

  cpu_model::CalibrationOptions options;
  if (!args.json)
    std::cerr << "calibrate: measuring this host with all cores (streaming bandwidth, random gather, peak FLOP/s, matmul "
                 "peaks in float32/bfloat16/float16), a few seconds ...\n";
  const auto result = cpu_model::calibrate_host(options);
  const std::string host = host_name();
  const auto machine = cpu_model::machine_from_calibration(result, machine_name(host), host, host_cpu_model_name(),
                                                           static_cast<std::int64_t>(std::thread::hardware_concurrency()),
                                                           utc_now(), std::string("tilesim ") + TILESIM_VERSION);
  const nlohmann::json document = cpu_model::to_json(machine);
  write_file_atomically(out, document.dump(2) + "\n");
  if (args.json) {
    std::cout << document.dump(2) << std::endl;
    return 0;
  }
  std::cout << std::fixed << std::setprecision(1) << "host " << host << ": " << machine.cpu_model << ", " << result.threads
            << " threads, last-level cache " << result.last_level_cache_bytes / (1024 * 1024) << " MiB, working set "
            << result.working_set_bytes / (1024 * 1024) << " MiB\n"
            << "  DRAM streaming bandwidth (triad)   " << std::setw(9) << result.stream_bytes_per_s / 1e9 << " GB/s\n"
            << "  DRAM random gather bandwidth       " << std::setw(9) << result.gather_bytes_per_s / 1e9 << " GB/s\n"
            << "  peak float32                       " << std::setw(9) << result.float32_flops_per_s / 1e9 << " GFLOP/s\n"
            << "  peak float64                       " << std::setw(9) << result.float64_flops_per_s / 1e9 << " GFLOP/s\n";
  for (const char* dtype : {"float32", "bfloat16", "float16"}) {
    const auto it = result.matmul_peaks.find(dtype);
    if (it == result.matmul_peaks.end()) continue;
    std::cout << "  matmul " << std::left << std::setw(28) << dtype << std::right << std::setw(9) << it->second.flops_per_s / 1e9
              << " GFLOP/s  (" << it->second.instruction_set << ": " << it->second.kernel << ")\n";
  }
  std::cout << "measured in " << std::setprecision(1) << result.wall_s << " s; wrote " << out << "\n";
  return 0;
}

// The subcommand's options on the command line (apps/command_line.hpp).
void add_host_calibrate_command(CLI::App& app, std::vector<Command>& commands) {
  struct Options {
    HostCalibrateArgs host_calibrate;
  };
  const auto o = std::make_shared<Options>();
  HostCalibrateArgs& host_calibrate = o->host_calibrate;
  auto* host_calibrate_cmd = app.add_subcommand(
      "calibrate", "Measure this host's ceilings (bandwidths, peak FLOP/s per dtype) into a CPU machine file");
  host_calibrate_cmd->add_option("--out", host_calibrate.out_path, "CPU machine file to write (default out/calibration/cpu.json)")
      ->check(non_empty_path("a file"));
  host_calibrate_cmd->add_flag("--json", host_calibrate.json, "Print the machine file on stdout");
  commands.push_back({host_calibrate_cmd, [o] {
    return host_calibrate_command(o->host_calibrate);
  }});
}

}  // namespace tilesim::cli
