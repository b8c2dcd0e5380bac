// tilesim report RESULTS.csv --format markdown|latex|csv|summary [--baseline B]... [--target T]...
// [--ops ...]: per op and (target, baseline) pair, the median speedup, its range and where the
// crossover lies, as a table for a paper (summary: a few lines for a terminal). Without --baseline/--target: every pair of backends in the results, each backend
// listed earlier in results.csv as the target of the later ones.
#include <algorithm>
#include <iostream>
#include <memory>

#include "analysis/results_table.hpp"
#include "analysis/speedup.hpp"
#include "analysis/speedup_report.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "apps/op_selection.hpp"
#include "common/error.hpp"

namespace tilesim::cli {

int speedup_report_command(const SpeedupReportArgs& args) {
  if (args.format != "markdown" && args.format != "latex" && args.format != "csv" && args.format != "summary")
    throw InputError("", "--format", "markdown, latex, csv or summary", "\"" + args.format + "\"");
  if (args.baselines.empty() != args.targets.empty())
    throw InputError("", args.baselines.empty() ? "--baseline" : "--target",
                     "--baseline and --target together (or neither: every pair of backends)", "only one of them");
  const auto rows = analysis::read_results_csv(args.results);
  const auto ops = ops_to_draw(rows, args.ops);

  std::vector<std::pair<analysis::TimeSeries, analysis::TimeSeries>> pairs;
  if (args.targets.empty()) {
    std::vector<std::string> backends;
    for (const auto& r : rows)
      if (std::find(backends.begin(), backends.end(), r.backend) == backends.end()) backends.push_back(r.backend);
    if (backends.size() < 2)
      throw InputError(args.results, "", "rows of at least two backends (or --baseline with a reference CSV)",
                       std::to_string(backends.size()) + " backend");
    for (std::size_t t = 0; t < backends.size(); ++t)
      for (std::size_t b = t + 1; b < backends.size(); ++b)
        pairs.push_back({analysis::series_from_rows(rows, backends[t], args.results),
                         analysis::series_from_rows(rows, backends[b], args.results)});
  } else {
    for (const auto& t : args.targets)
      for (const auto& b : args.baselines)
        pairs.push_back({analysis::resolve_series(rows, args.results, t, ops), analysis::resolve_series(rows, args.results, b, ops)});
  }
  const auto table = analysis::speedup_table(pairs, ops);
  if (table.empty())
    throw InputError(args.results, "", "points that a target and its baseline both have (same op, sizes and dtype)", "none");
  if (args.format == "markdown") std::cout << analysis::speedup_table_markdown(table);
  else if (args.format == "latex") std::cout << analysis::speedup_table_latex(table);
  else if (args.format == "summary") std::cout << analysis::speedup_summary(rows, table);
  else std::cout << analysis::speedup_table_csv(table);
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
