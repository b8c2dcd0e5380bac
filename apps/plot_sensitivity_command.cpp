// tilesim plot sensitivity RESULTS.csv [--out DIR] [--ops LIST]: a sweep over machine figures (its
// backends what-if machines, docs/sweep-format.md "Machine axes") drawn as architects read one: time
// against each figure, and a tornado of every figure's span per backend; the table on stdout.
#include <iostream>
#include <memory>

#include "analysis/gnuplot.hpp"
#include "analysis/workload_results.hpp"
#include "analysis/results_table.hpp"
#include "analysis/sensitivity_figure.hpp"
#include "apps/cli_checks.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "analysis/op_selection.hpp"
#include "apps/render_figures.hpp"

namespace tilesim::cli {

namespace {

struct SensitivityPlotArgs {
  std::string results;
  std::string out_dir;  // default: beside RESULTS.csv, in plots/
  std::string ops;      // "" : every op of the rows
};

int plot_sensitivity_command(const SensitivityPlotArgs& args) {
  const auto rows = analysis::read_speedup_rows(args.results);
  const auto curves = analysis::machine_sensitivity(rows, args.results, analysis::ops_to_draw(rows, args.ops));
  analysis::require_gnuplot();
  std::cout << analysis::sensitivity_table(curves);
  const std::string out_dir = plots_dir(args.out_dir, args.results);
  render_and_list(out_dir, analysis::sensitivity_figures(curves));
  return 0;
}

}  // namespace

// The subcommand's options on the command line (apps/command_line.hpp).
void add_plot_sensitivity_command(CLI::App& plot_cmd, std::vector<Command>& commands) {
  const auto args = std::make_shared<SensitivityPlotArgs>();
  auto* cmd = plot_cmd.add_subcommand(
      "sensitivity", "Time against each machine figure of a sweep over machine figures, and each figure's span as a tornado");
  cmd->add_option("results", args->results, "results.csv of tilesim sweep on a sweep file with machine axes")->required();
  cmd->add_option("--out", args->out_dir, "Directory for the plots (default: plots/ beside the results)")
      ->check(non_empty_path("a directory"));
  cmd->add_option("--ops", args->ops, "Comma-separated ops to include (default: every op in the results)");
  commands.push_back({cmd, [args] { return plot_sensitivity_command(*args); }});
}

}  // namespace tilesim::cli
