// tilesim plot throughput RESULTS.csv [--out DIR]: a batch-size sweep's throughput versus batch size,
// one line per backend, log-log, in SVG, PNG and PDF with the gnuplot script and data beside them.
#include <memory>

#include "analysis/gnuplot.hpp"
#include "analysis/throughput_figure.hpp"
#include "apps/cli_checks.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "apps/render_figures.hpp"

namespace tilesim::cli {

int plot_throughput_command(const ThroughputPlotArgs& args) {
  const auto rows = analysis::read_throughput_csv(args.results);
  analysis::require_gnuplot();
  const std::string out_dir = plots_dir(args.out_dir, args.results);
  render_and_list(out_dir, {analysis::throughput_figure(rows)});
  return 0;
}

// The subcommand's options on the command line (apps/command_line.hpp).
void add_plot_throughput_command(CLI::App& plot_cmd, std::vector<Command>& commands) {
  const auto args = std::make_shared<ThroughputPlotArgs>();
  ThroughputPlotArgs& throughput = *args;
  auto* throughput_cmd = plot_cmd.add_subcommand(
      "throughput", "Throughput versus batch size of a batch-size sweep's results.csv, one line per backend (log-log)");
  throughput_cmd->add_option("results", throughput.results, "results.csv written by tilesim sweep on a batch-size sweep file")->required();
  throughput_cmd->add_option("--out", throughput.out_dir, "Directory for the plots (default: plots/ beside the results)")
      ->check(non_empty_path("a directory"));
  commands.push_back({throughput_cmd, [args] { return plot_throughput_command(*args); }});
}

}  // namespace tilesim::cli
