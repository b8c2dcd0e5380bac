// tilesim plot scaling REPORT.json... [--out DIR]: from the reports of workloads with a "parallel"
// section, throughput versus chips used (one line per system) and, for pipelines, step time versus
// micro-batches (one line per system), in SVG, PNG and PDF with the gnuplot script and data beside them;
// and the points as a table on stdout.
#include <iomanip>
#include <iostream>
#include <memory>

#include "analysis/gnuplot.hpp"
#include "analysis/scaling_figure.hpp"
#include "apps/cli_checks.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "apps/render_figures.hpp"
#include "runs/result_tables.hpp"

namespace tilesim::cli {

int plot_scaling_command(const ScalingPlotArgs& args) {
  const auto points = analysis::read_scaling_reports(args.reports);
  std::vector<analysis::GnuplotFigure> figures;
  bool any_plain = false, any_pipeline = false;
  for (const auto& p : points) (p.stages > 1 || !p.schedule.empty() ? any_pipeline : any_plain) = true;
  if (any_plain) figures.push_back(analysis::scaling_throughput_figure(points));
  if (any_pipeline) figures.push_back(analysis::pipeline_step_figure(points));
  analysis::require_gnuplot();

  std::cout << std::left << std::setw(26) << "workload" << std::setw(24) << "backend" << std::right << std::setw(8) << "chips"
            << std::setw(9) << "micro" << std::setw(13) << "step" << std::setw(14) << "throughput" << std::setw(11) << "efficiency"
            << std::setw(8) << "bubble" << "  kind\n";
  for (const auto& p : points) {
    std::ostringstream eff, bubble;
    if (p.efficiency >= 0) eff << std::fixed << std::setprecision(3) << p.efficiency;
    else eff << "-";
    if (p.bubble_share >= 0) bubble << std::fixed << std::setprecision(3) << p.bubble_share;
    else bubble << "-";
    std::cout << std::left << std::setw(26) << p.workload << std::setw(24) << p.backend << std::right << std::setw(8) << p.devices
              << std::setw(9) << (p.schedule.empty() ? std::string("-") : std::to_string(p.micro_batches)) << std::setw(13)
              << runs::format_time(p.step_time_s) << std::setw(14) << runs::si_text(p.throughput_per_s, "") << std::setw(11) << eff.str()
              << std::setw(8) << bubble.str() << "  " << p.kind << ", " << p.unit << "\n";
  }
  const std::string out_dir = plots_dir(args.out_dir, args.reports.front());
  render_and_list(out_dir, figures);
  return 0;
}

// The subcommand's options on the command line (apps/command_line.hpp).
void add_plot_scaling_command(CLI::App& plot_cmd, std::vector<Command>& commands) {
  const auto args = std::make_shared<ScalingPlotArgs>();
  ScalingPlotArgs& scaling = *args;
  auto* scaling_cmd = plot_cmd.add_subcommand(
      "scaling", "Throughput versus chips (one line per system) and pipelined step time versus micro-batches, from scaling reports");
  scaling_cmd->add_option("reports", scaling.reports, "report.json files of tilesim run on workloads with a \"parallel\" section")->required();
  scaling_cmd->add_option("--out", scaling.out_dir, "Directory for the plots (default: plots/ beside the first report)")
      ->check(non_empty_path("a directory"));
  commands.push_back({scaling_cmd, [args] { return plot_scaling_command(*args); }});
}

}  // namespace tilesim::cli
