#include "analysis/workload_results.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/text_file.hpp"
#include "results/workload_sweep_columns.hpp"

namespace tilesim::analysis {

namespace {

const std::string workload_results_what = "a readable results.csv (written by tilesim sweep)";

std::string read_results_text(const std::string& path) {
  return read_text_file(path, {limits::max_results_csv_bytes, limits::max_csv_line_bytes}, workload_results_what);
}

// The cells a surface reads besides the axes; the header must hold them.
const std::vector<std::string>& workload_results_columns_read() {
  static const std::vector<std::string> columns = {"workload", "knob", "batch_size", "backend", "kind", "verified",
                                                   "run", "total_time_s", "point", "status"};
  return columns;
}

// "ipu:bow{chip.num_tiles=736}" -> "bow{chip.num_tiles=736}", "gpu-model:a100-40gb{x=1}:eager" ->
// "a100-40gb{x=1}": a what-if backend's machine as an op sweep's machine column names it; "" without
// overrides (the machine is not in a workload sweep's file).
std::string workload_results_machine(const std::string& backend) {
  const auto open = backend.find('{'), close = backend.find('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return "";
  const auto colon = backend.rfind(':', open);
  const std::size_t from = colon == std::string::npos ? 0 : colon + 1;
  return backend.substr(from, close + 1 - from);
}

// The name a workload sweep's figures go by: its one workload's, else its folder's.
std::string workload_results_figure_name(const std::vector<ResultRow>& rows, const std::string& path) {
  std::set<std::string> names;
  for (const ResultRow& r : rows) names.insert(r.point_columns.at("workload"));
  if (names.size() == 1 && !names.begin()->empty()) return *names.begin();
  const std::string folder = std::filesystem::path(path).lexically_normal().parent_path().filename().string();
  return folder.empty() || folder == "." || folder == ".." ? std::string("workload_sweep") : folder;
}

std::vector<ResultRow> parse_workload_sweep_rows(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) throw InputError(path, "line 1", "the header of a workload sweep's results.csv", "an empty file");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::vector<std::string> header = split_csv_record(line, path, 1);
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < header.size(); ++i) at.emplace(header[i], i);
  for (const std::string& c : workload_results_columns_read())
    if (!at.count(c))
      throw InputError(path, "line 1", "the header of a workload sweep's results.csv, with the column " + c,
                       "\"" + line.substr(0, 120) + "\"");
  // The point's cells: the fixed ones that say what ran, then one per axis (neither the sweep's own
  // columns nor status).
  std::vector<std::pair<std::string, std::size_t>> point_cells;
  for (const char* fixed : {"workload", "knob", "batch_size", "run"}) point_cells.emplace_back(fixed, at.at(fixed));
  const auto& leading = workload_sweep_leading_columns();
  for (std::size_t i = 0; i < header.size(); ++i)
    if (std::find(leading.begin(), leading.end(), header[i]) == leading.end() && header[i] != workload_sweep_status_column() &&
        !header[i].empty() && at.at(header[i]) == i)
      point_cells.emplace_back(header[i], i);

  std::vector<ResultRow> rows;
  for (int n = 2; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const auto cells = split_csv_record(line, path, n);
    const std::string where = path + ":" + std::to_string(n);
    if (cells.size() != header.size())
      throw InputError(where, "", std::to_string(header.size()) + " fields as in the header", std::to_string(cells.size()));
    ResultRow r;
    r.line = n;
    r.dtype = "";
    r.backend = cells[at.at("backend")];
    r.kind = cells[at.at("kind")];
    r.verified = cells[at.at("verified")];
    r.machine = workload_results_machine(r.backend);
    for (const auto& [name, index] : point_cells) r.point_columns[name] = cells[index];
    if (cells[at.at("status")] == "ok") {
      const std::string& t = cells[at.at("total_time_s")];
      const std::optional<double> v = csv_finite_number(t);
      if (!v || *v <= 0)
        throw InputError(where, "column total_time_s", "a time in seconds > 0 (the row's status is ok)", "\"" + t + "\"");
      r.time_s = v;
    }
    rows.push_back(std::move(r));
  }
  const std::string name = workload_results_figure_name(rows, path);
  for (ResultRow& r : rows) r.op = name;
  return rows;
}

}  // namespace

bool is_workload_sweep_header(const std::vector<std::string>& header) {
  const auto has = [&](const char* c) { return std::find(header.begin(), header.end(), c) != header.end(); };
  return has("workload") && has("point") && has("total_time_s") && has(workload_sweep_status_column().c_str()) && !has("op");
}

std::vector<ResultRow> read_workload_sweep_rows(const std::string& path) {
  return parse_workload_sweep_rows(read_results_text(path), path);
}

std::vector<ResultRow> read_speedup_rows(const std::string& path, bool* workload_sweep) {
  const std::string text = read_results_text(path);
  std::string first = text.substr(0, text.find('\n'));
  if (!first.empty() && first.back() == '\r') first.pop_back();
  const bool workload = is_workload_sweep_header(split_csv_record(first, path, 1));
  if (workload_sweep) *workload_sweep = workload;
  return workload ? parse_workload_sweep_rows(text, path) : parse_results_csv(text, path);
}

}  // namespace tilesim::analysis
