// tilesim's command line (CLI11): parses arguments, calls the commands, and (run_cli) maps errors to exit
// codes: 0 success, 1 internal error, 2 bad input (usage, workload, machine or index file), 3 does not fit.
// A library function, so that the executable (main.cpp) and the Python module (python/) share it.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <new>

#include <CLI/CLI.hpp>
#include <omp.h>

#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "backends/registry.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/tool_identity.hpp"
#include "sim/version.hpp"

namespace tilesim::cli {

std::string version_text() {
  return std::string("tilesim ") + TILESIM_VERSION + ", revision " + tool_revision() + " (SystemC " + sim::systemc_version() + ", OpenMP " +
         std::to_string(_OPENMP) + ", " + std::to_string(omp_get_max_threads()) +
         " threads; backends: " + backends::version_summary() + ")";
}

std::uint64_t checked_seed(std::int64_t seed) {
  return static_cast<std::uint64_t>(limits::checked_option("--seed", seed, 0, limits::max_seed));
}

int dispatch(int argc, char** argv) {
  CLI::App app{"tilesim: how fast would gather/scatter and GNN workloads run on a tile-based IPU-class processor, "
               "against real CPU kernels, and why.",
               "tilesim"};
  app.set_version_flag("--version", version_text());
  app.require_subcommand(0, 1);

  std::vector<Command> commands;
  add_run_command(app, commands);
  add_machines_command(app, commands);
  add_backends_command(app, commands);
  add_validate_command(app, commands);
  add_calibrate_model_command(app, commands);
  add_sweep_command(app, commands);
  add_host_calibrate_command(app, commands);
  add_roofline_command(app, commands);
  auto* plot_cmd = app.add_subcommand("plot", "Plots of a results.csv");
  plot_cmd->require_subcommand(1);
  add_plot_surface_command(*plot_cmd, commands);
  add_plot_throughput_command(*plot_cmd, commands);
  add_plot_sensitivity_command(*plot_cmd, commands);
  add_plot_pareto_command(*plot_cmd, commands);
  add_plot_contour_command(*plot_cmd, commands);
  add_plot_scaling_command(*plot_cmd, commands);
  add_report_command(app, commands);
  add_fit_command(app, commands);
  add_placement_command(app, commands);

  auto* help_cmd = app.add_subcommand("help", "Show this help");

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "tilesim: error: " << e.what() << "\n(run `tilesim help` for usage)\n";
    return static_cast<int>(ExitCode::bad_input);
  }

  for (const Command& c : commands)
    if (*c.subcommand) return c.run();
  // App::help() would describe the selected subcommand ("help" itself); ask for the top level.
  const std::string top_help = app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
  if (*help_cmd) {
    std::cout << top_help;
    return 0;
  }
  std::cerr << top_help;
  return static_cast<int>(ExitCode::bad_input);
}

int run_cli(int argc, char** argv) {
  try {
    const int code = dispatch(argc, argv);
    // What went to standard output must have arrived (a full disk, a closed pipe): a table or JSON
    // that was cut short is a failure, not a success.
    std::cout.flush();
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
      std::cerr << "tilesim: error: could not write standard output" << (errno ? std::string(" (") + std::strerror(errno) + ")" : "")
                << "; what was printed is incomplete\n";
      return static_cast<int>(ExitCode::internal_error);
    }
    return code;
  } catch (const Error& e) {
    std::cerr << "tilesim: error: " << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    std::cerr << "tilesim: internal error: out of host memory\n";
    return static_cast<int>(ExitCode::internal_error);
  } catch (const std::exception& e) {
    std::cerr << "tilesim: internal error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::internal_error);
  }
}

}  // namespace tilesim::cli
