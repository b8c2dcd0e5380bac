// tilesim plot contour RESULTS.csv --x PATH --y PATH [--ops LIST] [--backends LIST] [--out DIR]: a
// sweep over machine figures (docs/sweep-format.md "Machine axes") read as a map over two of them: per
// base backend and op, the time relative to the reference cell as a heat map with iso-lines
// (docs/analysis.md, "tilesim plot contour"); the matrix on stdout.
#include <iostream>
#include <memory>

#include "analysis/contour_figure.hpp"
#include "analysis/gnuplot.hpp"
#include "analysis/op_selection.hpp"
#include "analysis/workload_results.hpp"
#include "analysis/results_table.hpp"
#include "apps/cli_checks.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "apps/render_figures.hpp"

namespace tilesim::cli {

namespace {

struct ContourPlotArgs {
  std::string results;
  std::string x_figure, y_figure;  // figure paths, "chip.sram_bytes_per_tile"
  std::string out_dir;             // default: beside RESULTS.csv, in plots/
  std::string ops;                 // "" : every op of the rows
  std::string backends;            // "" : every base backend of the rows
};

int plot_contour_command(const ContourPlotArgs& args) {
  const auto rows = analysis::read_speedup_rows(args.results);
  const auto maps = analysis::contour_maps(rows, args.results, args.x_figure, args.y_figure, analysis::ops_to_draw(rows, args.ops),
                                           analysis::split_list(args.backends));
  analysis::require_gnuplot();
  std::cout << analysis::contour_table(maps);
  const std::string out_dir = plots_dir(args.out_dir, args.results);
  render_and_list(out_dir, analysis::contour_figures(maps));
  return 0;
}

}  // namespace

// The subcommand's options on the command line (apps/command_line.hpp).
void add_plot_contour_command(CLI::App& plot_cmd, std::vector<Command>& commands) {
  const auto args = std::make_shared<ContourPlotArgs>();
  auto* cmd = plot_cmd.add_subcommand(
      "contour", "A sweep over machine figures as a map over two of them: time relative to a reference cell, with iso-lines");
  cmd->add_option("results", args->results, "results.csv of tilesim sweep on a sweep file with machine axes")->required();
  cmd->add_option("--x", args->x_figure, "The figure path across (chip.sram_bytes_per_tile)")->required();
  cmd->add_option("--y", args->y_figure, "The figure path up (chip.exchange_bytes_per_cycle)")->required();
  cmd->add_option("--out", args->out_dir, "Directory for the plots (default: plots/ beside the results)")
      ->check(non_empty_path("a directory"));
  cmd->add_option("--ops", args->ops, "Comma-separated ops to include (default: every op in the results)");
  cmd->add_option("--backends", args->backends,
                  "Comma-separated base backends to include, without overrides (ipu:bow; default: every one that sweeps both figures)");
  commands.push_back({cmd, [args] { return plot_contour_command(*args); }});
}

}  // namespace tilesim::cli
