// tilesim report RESULTS.csv --format markdown|latex|csv|summary [--baseline B]... [--target T]...
// [--ops ...]: per op and (target, baseline) pair, the median speedup, its range and where the
// crossover lies, as a table for a paper (summary: a few lines for a terminal). Without --baseline/--target: every pair of backends in the results, each backend
// listed earlier in results.csv as the target of the later ones.
#include <iostream>
#include <memory>

#include "analysis/speedup_report_text.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"

namespace tilesim::cli {

int speedup_report_command(const SpeedupReportArgs& args) {
  analysis::SpeedupReportRequest request;
  request.results = args.results;
  request.format = args.format;
  request.baselines = args.baselines;
  request.targets = args.targets;
  request.ops = args.ops;
  std::cout << analysis::speedup_report_text(request);
  return 0;
}

// The subcommand's options on the command line (apps/command_line.hpp).
void add_report_command(CLI::App& app, std::vector<Command>& commands) {
  struct Options {
    SpeedupReportArgs report;
  };
  const auto o = std::make_shared<Options>();
  SpeedupReportArgs& report = o->report;
  auto* report_cmd = app.add_subcommand("report", "Speedup tables (median, range, crossover) of a results.csv");
  report_cmd->add_option("results", report.results, "results.csv written by tilesim sweep")->required();
  report_cmd->add_option("--format", report.format, "markdown, latex, csv or summary (a few lines)")->capture_default_str();
  report_cmd->add_option("--baseline", report.baselines, "Backend or hydronet reference (repeatable; default: every pair)");
  report_cmd->add_option("--target", report.targets, "Backend or hydronet reference (repeatable)");
  report_cmd->add_option("--ops", report.ops, "Comma-separated ops (default: every op of the results)");
  commands.push_back({report_cmd, [o] {
    return speedup_report_command(o->report);
  }});
}

}  // namespace tilesim::cli
