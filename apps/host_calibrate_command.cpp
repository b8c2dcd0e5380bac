// tilesim calibrate [--out FILE] [--json]: measures this host's ceilings (streaming and random-gather
// DRAM bandwidth, peak FLOP/s per dtype, all cores) in a few seconds and writes a CPU machine file
// (models/cpu/README.md) whose every figure says it was measured, when and on which host. The
// measurement and the file's content are backends/host_calibration (tilesim.calibrate makes them too);
// the command writes the file and prints.
#include <iomanip>
#include <iostream>
#include <memory>

#include "apps/cli_checks.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "backends/host_calibration.hpp"
#include "backends/machine_ceilings.hpp"
#include "common/atomic_file.hpp"

namespace tilesim::cli {

int host_calibrate_command(const HostCalibrateArgs& args) {
  const std::string out = args.out_path.empty() ? backends::default_cpu_machine_file() : args.out_path;
  backends::check_calibration_destination(out);  // before the seconds of measurement
  const backends::HostCalibration calibration = backends::calibrate_this_host(!args.json);
  const auto& result = calibration.result;
  write_file_atomically(out, calibration.document.dump(2) + "\n");
  if (args.json) {
    std::cout << calibration.document.dump(2) << std::endl;
    return 0;
  }
  std::cout << std::fixed << std::setprecision(1) << "host " << calibration.host << ": " << calibration.machine.cpu_model << ", "
            << result.threads << " threads, last-level cache " << result.last_level_cache_bytes / (1024 * 1024) << " MiB, working set "
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
