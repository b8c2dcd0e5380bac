#include "analysis/speedup_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <cstdio>
#include <sstream>

#include "analysis/results_table.hpp"

namespace tilesim::analysis {

namespace {

std::string range_text(const SpeedupStats& s, const std::string& dash) {
  return format_speedup(s.min) + dash + format_speedup(s.max);
}

// The points cell: "590", "590 (+4 disturbed, 12.0x - 7722x)" or "4 (all disturbed)".
std::string points_text(const SpeedupTableRow& r, const std::string& times) {
  if (r.all_disturbed) return std::to_string(r.stats.count) + " (all disturbed)";
  std::string text = std::to_string(r.stats.count);
  if (r.disturbed_points)
    text += " (+" + std::to_string(r.disturbed_points) + " disturbed, " + format_speedup(r.disturbed_min) + times + " - " +
            format_speedup(r.disturbed_max) + times + ")";
  return text;
}

bool any_disturbed(const std::vector<SpeedupTableRow>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const SpeedupTableRow& r) { return r.disturbed_points > 0; });
}

// Why disturbed points are set apart, under a table that has any.
const char* kDisturbedNote =
    "disturbed: a measured time taken while other work held the host's cores (results.csv column disturbed); those "
    "points are left out of the median, range, share and crossover, and their own range is shown.";

std::string full_number(double v) {
  if (!std::isfinite(v)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::vector<SpeedupTableRow> speedup_table(const std::vector<std::pair<TimeSeries, TimeSeries>>& pairs,
                                           const std::vector<std::string>& ops) {
  std::vector<SpeedupTableRow> rows;
  for (const auto& op : ops)
    for (const auto& [target, baseline] : pairs) {
      const auto points = paired_speedups(baseline, target, op);
      if (points.empty()) continue;
      SpeedupTableRow r;
      r.op = op;
      r.target = target.name;
      r.baseline = baseline.name;
      r.target_label = target.label;
      r.baseline_label = baseline.label;
      r.target_kind = target.kind;
      r.baseline_kind = baseline.kind;
      r.target_mode = target.mode;
      r.baseline_mode = baseline.mode;
      std::vector<SpeedupSample> clean, disturbed;
      for (const auto& p : points) (p.disturbed ? disturbed : clean).push_back(p);
      r.disturbed_points = disturbed.size();
      r.all_disturbed = clean.empty();
      r.stats = summarize_speedups(r.all_disturbed ? disturbed : clean);
      if (!disturbed.empty()) {
        const auto by_speedup = [](const SpeedupSample& a, const SpeedupSample& b) { return a.speedup < b.speedup; };
        const auto [lo, hi] = std::minmax_element(disturbed.begin(), disturbed.end(), by_speedup);
        r.disturbed_min = lo->speedup;
        r.disturbed_max = hi->speedup;
      }
      rows.push_back(std::move(r));
    }
  return rows;
}

std::string speedup_table_markdown(const std::vector<SpeedupTableRow>& rows) {
  std::ostringstream s;
  s << "| op | target | baseline | points | median speedup | geomean | range | target faster | crossover (speedup = 1) |\n"
    << "|---|---|---|---:|---:|---:|---:|---:|---|\n";
  for (const auto& r : rows)
    s << "| " << r.op << " | " << r.target_label << " | " << r.baseline_label << " | " << points_text(r, "x") << " | "
      << format_speedup(r.stats.median) << "x | " << format_speedup(r.stats.geomean) << "x | "
      << range_text(r.stats, "x - ") << "x | " << share_percent(r.stats.target_faster_share) << " | " << r.stats.crossover.text
      << " |\n";
  s << "\nspeedup = baseline time / target time at each point both have (> 1: the target is faster); range = min - max.\n";
  if (any_disturbed(rows)) s << "\n" << kDisturbedNote << "\n";
  return s.str();
}

std::string speedup_summary(const std::vector<ResultRow>& results, const std::vector<SpeedupTableRow>& rows) {
  std::ostringstream s;
  // Backends in the order they first appear, each with its count, kind and mode.
  std::vector<std::string> order;
  std::map<std::string, std::size_t> count;
  std::map<std::string, std::string> what;
  std::map<std::string, std::size_t> disturbed, fewer_threads;
  for (const auto& r : results) {
    if (!count.count(r.backend)) order.push_back(r.backend);
    ++count[r.backend];
    what[r.backend] = r.kind + (r.mode.empty() ? "" : ", " + r.mode);
    disturbed[r.backend] += r.disturbed.empty() ? 0 : 1;
    fewer_threads[r.backend] += r.threads && r.team_threads && *r.threads < *r.team_threads ? 1 : 0;
  }
  s << "results:";
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::string& b = order[i];
    s << (i ? "," : "") << " " << b << " " << count[b] << " points (" << what[b];
    if (disturbed[b]) s << "; " << disturbed[b] << " DISTURBED by other work";
    if (fewer_threads[b]) s << "; " << fewer_threads[b] << " timed on fewer threads than their team";
    s << ")";
  }
  s << "\n";
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& r : rows)
    if (std::find(pairs.begin(), pairs.end(), std::make_pair(r.target, r.baseline)) == pairs.end())
      pairs.push_back({r.target, r.baseline});
  for (const auto& [target, baseline] : pairs) {
    bool first = true;
    for (const auto& r : rows) {
      if (r.target != target || r.baseline != baseline) continue;
      if (first) s << r.target_label << " over " << r.baseline_label << ":";
      s << (first ? " " : "; ") << r.op << " median " << format_speedup(r.stats.median) << "x ("
        << format_speedup(r.stats.min) << "-" << format_speedup(r.stats.max) << "x)"
        << (r.all_disturbed ? " from DISTURBED measurements only (other work held the cores; not to be trusted)" : "") << ", "
        << (r.stats.crossover.exists ? r.stats.crossover.text
                                     : "faster at " + share_percent(r.stats.target_faster_share) + " of " +
                                           std::to_string(r.stats.count) + " points");
      if (r.disturbed_points && !r.all_disturbed)
        s << " [" << r.disturbed_points << " disturbed points left out: " << format_speedup(r.disturbed_min) << "-"
          << format_speedup(r.disturbed_max) << "x, measured while other work held the cores]";
      first = false;
    }
    s << "\n";
  }
  return s.str();
}

std::string latex_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '_': out += "\\_"; break;
      case '%': out += "\\%"; break;
      case '&': out += "\\&"; break;
      case '#': out += "\\#"; break;
      case '$': out += "\\$"; break;
      case '{': out += "\\{"; break;
      case '}': out += "\\}"; break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      case '\\': out += "\\textbackslash{}"; break;
      default: out += c;
    }
  }
  return out;
}

std::string speedup_table_latex(const std::vector<SpeedupTableRow>& rows) {
  std::ostringstream s;
  s << "% Written by tilesim report. Needs \\usepackage{booktabs}.\n"
    << "% speedup = baseline time / target time (> 1: the target is faster).\n"
    << "\\begin{tabular}{lllrrrrrl}\n\\toprule\n"
    << "op & target & baseline & points & median & geomean & range & faster & crossover (speedup $= 1$) \\\\\n\\midrule\n";
  for (const auto& r : rows) {
    std::string crossover = latex_escape(r.stats.crossover.text);
    // ">=" and "<=" read better as relations.
    for (const auto& [from, to] : {std::pair<std::string, std::string>{" >= ", " $\\geq$ "}, {" <= ", " $\\leq$ "}}) {
      const auto pos = crossover.find(from);
      if (pos != std::string::npos) crossover.replace(pos, from.size(), to);
    }
    const std::string points = r.all_disturbed       ? std::to_string(r.stats.count) + "$^{\\dagger}$"
                               : r.disturbed_points ? std::to_string(r.stats.count) + " + " + std::to_string(r.disturbed_points) +
                                                          "$^{\\dagger}$"
                                                    : std::to_string(r.stats.count);
    s << latex_escape(r.op) << " & " << latex_escape(r.target_label) << " & " << latex_escape(r.baseline_label) << " & "
      << points << " & " << format_speedup(r.stats.median) << "$\\times$ & " << format_speedup(r.stats.geomean)
      << "$\\times$ & " << range_text(r.stats, "--") << "$\\times$ & " << latex_escape(share_percent(r.stats.target_faster_share))
      << " & " << crossover << " \\\\\n";
  }
  s << "\\bottomrule\n\\end{tabular}\n";
  if (any_disturbed(rows))
    s << "\\par{\\footnotesize $^{\\dagger}$ " << latex_escape(kDisturbedNote)
      << " ($n + d^{\\dagger}$: $d$ such points left out; $n^{\\dagger}$: every point was, and the statistics are over them.)}\n";
  return s.str();
}

std::string speedup_table_csv(const std::vector<SpeedupTableRow>& rows) {
  std::ostringstream s;
  s << "op,target,target_kind,target_mode,baseline,baseline_kind,baseline_mode,points,median_speedup,geomean_speedup,"
       "min_speedup,max_speedup,target_faster_share,crossover_measure,crossover_below,crossover_above,"
       "target_faster_above,crossover_agreement,crossover,disturbed_points,disturbed_min_speedup,disturbed_max_speedup,"
       "all_disturbed\n";
  for (const auto& r : rows) {
    const auto& c = r.stats.crossover;
    s << csv_field(r.op) << "," << csv_field(r.target) << "," << csv_field(r.target_kind) << "," << csv_field(r.target_mode)
      << "," << csv_field(r.baseline) << "," << csv_field(r.baseline_kind) << "," << csv_field(r.baseline_mode) << ","
      << r.stats.count << "," << full_number(r.stats.median) << "," << full_number(r.stats.geomean) << ","
      << full_number(r.stats.min) << "," << full_number(r.stats.max) << "," << full_number(r.stats.target_faster_share)
      << "," << (c.exists ? c.measure : "") << "," << (c.exists ? full_number(c.below) : "") << ","
      << (c.exists ? full_number(c.above) : "") << "," << (c.exists ? (c.target_faster_above ? "true" : "false") : "")
      << "," << full_number(c.agreement) << "," << csv_field(c.text) << "," << r.disturbed_points << ","
      << (r.disturbed_points ? full_number(r.disturbed_min) : "") << ","
      << (r.disturbed_points ? full_number(r.disturbed_max) : "")
      << "," << (r.all_disturbed ? "true" : "false") << "\n";
  }
  return s.str();
}

}  // namespace tilesim::analysis
