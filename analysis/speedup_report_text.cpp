#include "analysis/speedup_report_text.hpp"

#include <algorithm>

#include "analysis/op_selection.hpp"
#include "analysis/results_table.hpp"
#include "analysis/speedup.hpp"
#include "analysis/speedup_report.hpp"
#include "common/error.hpp"

namespace tilesim::analysis {

namespace {

using SeriesPairs = std::vector<std::pair<TimeSeries, TimeSeries>>;

// Every pair of the file's backends, each listed earlier as the target of the later ones.
SeriesPairs every_backend_pair(const std::vector<ResultRow>& rows, const std::string& results) {
  std::vector<std::string> backends;
  for (const auto& r : rows)
    if (std::find(backends.begin(), backends.end(), r.backend) == backends.end()) backends.push_back(r.backend);
  if (backends.size() < 2)
    throw InputError(results, "", "rows of at least two backends (or --baseline with a reference CSV)",
                     std::to_string(backends.size()) + " backend");
  SeriesPairs pairs;
  for (std::size_t t = 0; t < backends.size(); ++t)
    for (std::size_t b = t + 1; b < backends.size(); ++b)
      pairs.push_back({series_from_rows(rows, backends[t], results), series_from_rows(rows, backends[b], results)});
  return pairs;
}

}  // namespace

std::string speedup_report_text(const SpeedupReportRequest& request) {
  const std::string& format = request.format;
  if (format != "markdown" && format != "latex" && format != "csv" && format != "summary")
    throw InputError("", "--format", "markdown, latex, csv or summary", "\"" + format + "\"");
  if (request.baselines.empty() != request.targets.empty())
    throw InputError("", request.baselines.empty() ? "--baseline" : "--target",
                     "--baseline and --target together (or neither: every pair of backends)", "only one of them");
  const auto rows = read_results_csv(request.results);
  const auto ops = ops_to_draw(rows, request.ops);
  SeriesPairs pairs;
  if (request.targets.empty()) {
    pairs = every_backend_pair(rows, request.results);
  } else {
    for (const auto& t : request.targets)
      for (const auto& b : request.baselines)
        pairs.push_back({resolve_series(rows, request.results, t, ops), resolve_series(rows, request.results, b, ops)});
  }
  const auto table = speedup_table(pairs, ops);
  if (table.empty())
    throw InputError(request.results, "", "points that a target and its baseline both have (same op, sizes and dtype)", "none");
  if (format == "markdown") return speedup_table_markdown(table);
  if (format == "latex") return speedup_table_latex(table);
  if (format == "summary") return speedup_summary(rows, table);
  return speedup_table_csv(table);
}

}  // namespace tilesim::analysis
