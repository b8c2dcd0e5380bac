#pragma once
// The command line as each command declares it: every subcommand's file adds its own options to the
// CLI11 app (beside the code that reads them) and hands back what to run once the line is parsed, so
// dispatch (apps/dispatch.cpp) only parses and calls the chosen one.
#include <functional>
#include <vector>

#include <CLI/CLI.hpp>

namespace tilesim::cli {

// A subcommand and what runs it; `run` reads the options its subcommand parsed and returns the exit code.
struct Command {
  CLI::App* subcommand;
  std::function<int()> run;
};

// In the order `tilesim help` lists them.
void add_run_command(CLI::App& app, std::vector<Command>& commands);
void add_machines_command(CLI::App& app, std::vector<Command>& commands);
void add_backends_command(CLI::App& app, std::vector<Command>& commands);
void add_validate_command(CLI::App& app, std::vector<Command>& commands);
void add_calibrate_model_command(CLI::App& app, std::vector<Command>& commands);
void add_sweep_command(CLI::App& app, std::vector<Command>& commands);
void add_host_calibrate_command(CLI::App& app, std::vector<Command>& commands);
void add_roofline_command(CLI::App& app, std::vector<Command>& commands);
// Under `tilesim plot`.
void add_plot_surface_command(CLI::App& plot, std::vector<Command>& commands);
void add_plot_throughput_command(CLI::App& plot, std::vector<Command>& commands);
void add_plot_sensitivity_command(CLI::App& plot, std::vector<Command>& commands);
void add_plot_pareto_command(CLI::App& plot, std::vector<Command>& commands);
void add_plot_contour_command(CLI::App& plot, std::vector<Command>& commands);
void add_plot_scaling_command(CLI::App& plot, std::vector<Command>& commands);
void add_report_command(CLI::App& app, std::vector<Command>& commands);
void add_fit_command(CLI::App& app, std::vector<Command>& commands);
void add_placement_command(CLI::App& app, std::vector<Command>& commands);

}  // namespace tilesim::cli
