#include "analysis/machine_sweep_rows.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/text_file.hpp"
#include "results/workload_sweep_columns.hpp"

namespace tilesim::analysis {

namespace {

bool is_workload_sweep_header(const std::vector<std::string>& header) {
  const auto has = [&](const std::string& c) { return std::find(header.begin(), header.end(), c) != header.end(); };
  return has("workload") && has("point") && has(workload_sweep_status_column()) && !has("op");
}

double number_cell(const std::string& text, const std::string& file, int line, const std::string& column) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    throw InputError(file, "line " + std::to_string(line) + ", column " + column, "a number", "\"" + text + "\"");
  }
  return v;
}

std::vector<ResultRow> workload_rows(const std::string& text, const std::string& file) {
  std::istringstream in(text);
  std::string record;
  std::getline(in, record);
  const std::vector<std::string> header = split_csv_record(record, file, 1);
  std::map<std::string, std::size_t> at;
  for (std::size_t k = 0; k < header.size(); ++k) at[header[k]] = k;
  std::vector<ResultRow> rows;
  int line = 1;
  while (std::getline(in, record)) {
    ++line;
    if (record.empty()) continue;
    const std::vector<std::string> cells = split_csv_record(record, file, line);
    if (cells.size() != header.size()) {
      throw InputError(file, "line " + std::to_string(line), std::to_string(header.size()) + " fields, as the header has",
                       std::to_string(cells.size()));
    }
    const auto cell = [&](const std::string& column) { return cells[at.at(column)]; };
    ResultRow r;
    r.line = line;
    r.op = cell("workload");
    r.backend = cell("backend");
    r.machine = backend_machine_part(r.backend);
    r.kind = cell("kind");
    r.mode = cell("run");
    r.verified = cell("verified");
    r.machine_hash = cell("machine_hash");
    r.shape.num_inputs = static_cast<std::int64_t>(number_cell(cell("point"), file, line, "point"));
    if (cell(workload_sweep_status_column()) != "does_not_fit") {
      const bool epoch = !cell("epoch_time_s").empty();
      const std::string column = epoch ? "epoch_time_s" : "total_time_s";
      r.time_s = number_cell(cell(column), file, line, column);
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

std::string backend_machine_part(const std::string& backend) {
  const std::size_t first = backend.find(':');
  if (first == std::string::npos) return "";
  const std::size_t close = backend.find('}', first);
  const std::size_t end = backend.find(':', close == std::string::npos ? first + 1 : close);
  return backend.substr(first + 1, end == std::string::npos ? std::string::npos : end - first - 1);
}

std::vector<ResultRow> read_machine_sweep_rows(const std::string& path) {
  const std::string text = read_text_file(path, {limits::max_results_csv_bytes, limits::max_csv_line_bytes},
                                         "a readable results.csv (written by tilesim sweep)");
  const std::string first_line = text.substr(0, text.find('\n'));
  if (is_workload_sweep_header(split_csv_record(first_line, path, 1))) return workload_rows(text, path);
  return parse_results_csv(text, path);
}

}  // namespace tilesim::analysis
