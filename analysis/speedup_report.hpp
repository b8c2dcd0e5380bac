#pragma once
// Tables for papers: per op and (target, baseline) pair, the median speedup, its geometric mean and
// range, the share of points where the target is faster, and where the crossover (speedup = 1) lies.
// Written as Markdown, LaTeX (booktabs) or CSV.
#include <string>
#include <vector>

#include "analysis/speedup.hpp"

namespace tilesim::analysis {

struct SpeedupTableRow {
  std::string op;
  std::string target, baseline;              // names: backend or reference path
  std::string target_label, baseline_label;  // for people: "Bow IPU (simulated)"
  std::string target_kind, baseline_kind;    // simulated / measured / modeled
  std::string target_mode, baseline_mode;    // "timing-only", "eager", ...
  SpeedupStats stats;
  // Points where either time was measured while other work held the host's cores (results.csv's
  // disturbed column): left out of `stats` (median, range, share, crossover), so no extreme ratio rests
  // on them, and counted here with their own range. When every point is disturbed, `stats` is over
  // them all and all_disturbed says so.
  std::size_t disturbed_points = 0;
  double disturbed_min = 0, disturbed_max = 0;
  bool all_disturbed = false;
};

// Rows for every op (in `ops` order) and pair, from the two series' common points. Pairs without a
// common point for an op are left out. Every format marks the disturbed points.
std::vector<SpeedupTableRow> speedup_table(const std::vector<std::pair<TimeSeries, TimeSeries>>& target_baseline_pairs,
                                           const std::vector<std::string>& ops);

std::string speedup_table_markdown(const std::vector<SpeedupTableRow>& rows);
std::string speedup_table_latex(const std::vector<SpeedupTableRow>& rows);
std::string speedup_table_csv(const std::vector<SpeedupTableRow>& rows);

// A few lines for a terminal: first what the results hold (points per backend, with kind and mode, and
// how many measured points were disturbed or timed on fewer threads), then one line per (target,
// baseline) pair with each op's median speedup, range and crossover, and the disturbed points left out.
std::string speedup_summary(const std::vector<ResultRow>& results, const std::vector<SpeedupTableRow>& rows);

// "A" -> "A", "scatter_add" -> "scatter\_add": text safe inside a LaTeX table.
std::string latex_escape(const std::string& text);

}  // namespace tilesim::analysis
