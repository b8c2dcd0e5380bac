#include "analysis/reference_data.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/text_file.hpp"

namespace tilesim::analysis {

namespace {

// Splits one CSV line on commas. The hydronet files quote nothing, so no quote handling is needed;
// a quoted field would fail the numeric parse below with a clear message.
std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream stream(line);
  while (std::getline(stream, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

std::string strip(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  const auto end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

int find_column(const std::vector<std::string>& header, const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < header.size(); ++i)
    for (const auto& name : names)
      if (header[i] == name) return static_cast<int>(i);
  return -1;
}

std::string line_ref(int line) { return "line " + std::to_string(line); }

double parse_number(const std::string& path, int line, const std::string& column, const std::string& text) {
  const std::string value = strip(text);
  if (!value.empty()) {
    errno = 0;
    char* end = nullptr;
    const double number = std::strtod(value.c_str(), &end);
    if (errno == 0 && end == value.c_str() + value.size() && std::isfinite(number)) return number;
  }
  throw InputError(path, line_ref(line), "a number in column '" + column + "'", "\"" + value + "\"");
}

double parse_positive(const std::string& path, int line, const std::string& column, const std::string& text) {
  const double number = parse_number(path, line, column, text);
  if (number <= 0) throw InputError(path, line_ref(line), "a positive number in column '" + column + "'", strip(text));
  return number;
}

// Sizes are written as "16" in the A100 files and "16.0" in the Bow files.
std::int64_t parse_size(const std::string& path, int line, const std::string& column, const std::string& text) {
  const double number = parse_number(path, line, column, text);
  if (number < 1 || number > 9.0e15 || std::floor(number) != number)
    throw InputError(path, line_ref(line), "a positive integer in column '" + column + "'", strip(text));
  return static_cast<std::int64_t>(number);
}

}  // namespace

std::vector<MeasuredPoint> read_hydronet_csv(const std::string& path, const std::string& op) {
  std::istringstream file(read_text_file(path, {limits::max_results_csv_bytes, limits::max_csv_line_bytes}, "a readable hydronet CSV file"));

  std::string text;
  int line_number = 0;
  std::vector<std::string> header;
  while (header.empty() && std::getline(file, text)) {
    ++line_number;
    if (strip(text).empty()) continue;
    header = split_csv_line(text);
    for (auto& name : header) name = strip(name);
  }
  if (header.empty()) throw InputError(path, "", "a header row", "an empty file");

  const int inputs_col = find_column(header, {"num_inputs"});
  const int features_col = find_column(header, {"num_features"});
  const int outputs_col = find_column(header, {"num_outputs"});
  // The Bow files spell micro with U+03BC (Greek mu); accept U+00B5 (micro sign) too.
  const int bow_time_col = find_column(header, {"time (\xCE\xBCs)", "time (\xC2\xB5s)", "time (us)"});
  const int a100_time_col = find_column(header, {"time"});
  const int time_col = bow_time_col >= 0 ? bow_time_col : a100_time_col;
  const int cycles_col = find_column(header, {"cycles"});
  const int iqr_col = find_column(header, {"iqr"});
  const std::string header_ref = line_ref(line_number);
  if (inputs_col < 0 || features_col < 0 || outputs_col < 0)
    throw InputError(path, header_ref, "columns num_inputs, num_features and num_outputs", "\"" + strip(text) + "\"");
  if (time_col < 0)
    throw InputError(path, header_ref, "a time column ('time (\xCE\xBCs)' or 'time')", "\"" + strip(text) + "\"");

  std::vector<MeasuredPoint> points;
  while (std::getline(file, text)) {
    ++line_number;
    if (strip(text).empty()) continue;
    const auto fields = split_csv_line(text);
    if (fields.size() < header.size())
      throw InputError(path, line_ref(line_number), std::to_string(header.size()) + " comma-separated fields",
                       std::to_string(fields.size()));
    MeasuredPoint point;
    point.op = op;
    point.line = line_number;
    point.shape.num_inputs = parse_size(path, line_number, "num_inputs", fields[inputs_col]);
    point.shape.num_features = parse_size(path, line_number, "num_features", fields[features_col]);
    point.shape.num_outputs = parse_size(path, line_number, "num_outputs", fields[outputs_col]);
    const double time_us = parse_positive(path, line_number, header[time_col], fields[time_col]);
    point.time_s = time_us * 1e-6;
    if (cycles_col >= 0) point.cycles = parse_positive(path, line_number, "cycles", fields[cycles_col]);
    if (iqr_col >= 0) {
      const double iqr_us = parse_number(path, line_number, "iqr", fields[iqr_col]);
      if (iqr_us < 0) throw InputError(path, line_ref(line_number), "a non-negative number in column 'iqr'", strip(fields[iqr_col]));
      point.iqr_s = iqr_us * 1e-6;
    }
    points.push_back(point);
  }
  if (points.empty()) throw InputError(path, "", "at least one data row", "only a header");
  return points;
}

}  // namespace tilesim::analysis
