// tilesim plot pareto RESULTS.csv --cost EXPR [--machines FILE] [--ops LIST] [--backends LIST] [--out DIR]:
// a sweep over machine figures (docs/sweep-format.md "Machine axes") read as a design space: each
// machine's total time over the grid against a cost its machine file carries (docs/analysis.md,
// "tilesim plot pareto"), the front of machines no cheaper one beats; the table on stdout.
#include <iostream>
#include <memory>

#include "analysis/gnuplot.hpp"
#include "analysis/op_selection.hpp"
#include "analysis/pareto_figure.hpp"
#include "analysis/workload_results.hpp"
#include "analysis/results_table.hpp"
#include "apps/cli_checks.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "apps/render_figures.hpp"

namespace tilesim::cli {

namespace {

struct ParetoPlotArgs {
  std::string results;
  std::string cost;      // figure paths joined by '*'
  std::string machines;  // default: machines.json beside RESULTS.csv
  std::string out_dir;   // default: beside RESULTS.csv, in plots/
  std::string ops;       // "" : every op of the rows
  std::string backends;  // "" : every base backend of the rows
};

int plot_pareto_command(const ParetoPlotArgs& args) {
  const auto rows = analysis::read_speedup_rows(args.results);
  const std::string machines_file = args.machines.empty() ? analysis::sweep_machines_path(args.results) : args.machines;
  const auto machines = analysis::read_sweep_machines(machines_file);
  const auto groups = analysis::pareto_fronts(rows, args.results, machines, machines_file, args.cost,
                                              analysis::ops_to_draw(rows, args.ops), analysis::split_list(args.backends));
  analysis::require_gnuplot();
  std::cout << analysis::pareto_table(groups);
  const std::string out_dir = plots_dir(args.out_dir, args.results);
  render_and_list(out_dir, analysis::pareto_figures(groups));
  return 0;
}

}  // namespace

// The subcommand's options on the command line (apps/command_line.hpp).
void add_plot_pareto_command(CLI::App& plot_cmd, std::vector<Command>& commands) {
  const auto args = std::make_shared<ParetoPlotArgs>();
  auto* cmd = plot_cmd.add_subcommand(
      "pareto", "Each machine of a sweep over machine figures: total time against a cost its machine file carries, and the Pareto front");
  cmd->add_option("results", args->results, "results.csv of tilesim sweep on a sweep file with machine axes")->required();
  cmd->add_option("--cost", args->cost,
                  "A machine figure's path, or paths joined by '*' (chip.num_tiles*chip.sram_bytes_per_tile: the chip's SRAM bytes)")
      ->required();
  cmd->add_option("--machines", args->machines, "The sweep's machines.json (default: beside the results)")
      ->check(non_empty_path("a file"));
  cmd->add_option("--out", args->out_dir, "Directory for the plots (default: plots/ beside the results)")
      ->check(non_empty_path("a directory"));
  cmd->add_option("--ops", args->ops, "Comma-separated ops to include (default: every op in the results)");
  cmd->add_option("--backends", args->backends,
                  "Comma-separated base backends to include, without overrides (ipu:bow; default: every one with several machines)");
  commands.push_back({cmd, [args] { return plot_pareto_command(*args); }});
}

}  // namespace tilesim::cli
