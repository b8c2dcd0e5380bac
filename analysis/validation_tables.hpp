#pragma once
// The tables of `tilesim validate --format text|markdown|latex`: one table per suite. The hydronet
// suite: median and p90 absolute percentage error per machine, op and split; a published suite
// (layers, whole models): per entry the published figure, the prediction with its label, the error
// and the source, and the entries not yet comparable with the feature they need. Pure.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tilesim::analysis {

enum class TableFormat { text, markdown, latex };
// "text", "markdown" or "latex"; an InputError naming --format otherwise.
TableFormat parse_table_format(const std::string& name);

// A table: a title, a header and rows of as many cells as the header.
struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string note;  // a line under the table (may be empty)
};
std::string render_table(const Table& table, TableFormat format);

// A percentage figure of a report, one decimal: "12.3%" ("+12.3%" with `sign`); "-" when it is not a
// number (no point compared).
std::string percent_text(const nlohmann::json& value, bool sign = false);

// LaTeX: \ & % $ # _ { } ~ ^ escaped, so any text reads as itself. Markdown: | and \ escaped, line
// breaks turned into spaces, so a cell stays one cell.
std::string escape_latex(const std::string& text);
std::string escape_markdown(const std::string& text);

// The hydronet report's error table (held-out, calibration, all).
Table hydronet_table(const nlohmann::json& report);
// A published suite's report (analysis/published_report.hpp): the compared entries and the entries not
// yet comparable, as two tables (the second omitted when there are none, the first when none compare).
std::vector<Table> published_tables(const nlohmann::json& report);

}  // namespace tilesim::analysis
