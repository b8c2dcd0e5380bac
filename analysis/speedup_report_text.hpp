#pragma once
// `tilesim report`'s text (the command prints it; the Python module returns it): the speedup table of
// a results.csv in markdown, LaTeX, CSV or a few summary lines, for each (target, baseline) pair asked
// for, or every pair of backends in the file (each listed earlier as the target of the later ones).
#include <string>
#include <vector>

namespace tilesim::analysis {

struct SpeedupReportRequest {
  std::string results;                          // results.csv
  std::string format = "markdown";              // markdown | latex | csv | summary
  std::vector<std::string> baselines, targets;  // both or neither (every pair of backends)
  std::string ops;                              // comma-separated; "" : every op of the results
};

// Throws InputError for a bad format, a baseline without a target (or the reverse), fewer than two
// backends, or no point a target and its baseline share.
std::string speedup_report_text(const SpeedupReportRequest& request);

}  // namespace tilesim::analysis
