#pragma once
// Small text helpers shared by the sweep figures (surfaces, rooflines): gnuplot string quoting under
// enhanced text, numbers, and size labels people read at a glance.
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tilesim::analysis {

// A double-quoted gnuplot string showing `text` literally under the enhanced-text terminals, where
// '_' and '^' would otherwise make sub- and superscripts ("scatter_add"). '\n' breaks the line.
inline std::string gp_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '_' || c == '^' || c == '{' || c == '}' || c == '@' || c == '&' || c == '~') out += "\\\\";
    else if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";  // a line break in a double-quoted gnuplot string
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// Full precision for data files; gnuplot reads "%.9g".
inline std::string gp_number(double value) {
  if (!std::isfinite(value)) return "NaN";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", value);
  return buf;
}

// Six significant digits: numbers in labels and titles.
inline std::string short_number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  return buf;
}

// Okabe-Ito colours, distinct for colour-blind readers and in greyscale: one per series, in order.
inline constexpr const char* kSeriesColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};

// 16, 512, 1k, 32k, 1M: a row count as an axis label.
inline std::string size_label(std::int64_t size) {
  if (size >= (std::int64_t{1} << 20) && size % (std::int64_t{1} << 20) == 0) return std::to_string(size >> 20) + "M";
  if (size >= 1024 && size % 1024 == 0) return std::to_string(size / 1024) + "k";
  return std::to_string(size);
}

// "pareto_" + "ipu:bow_gather" -> "pareto_ipu_bow_gather": a figure's file stem gnuplot and shells take
// as is (letters, digits, '_', '-', '.'; anything else becomes '_').
inline std::string figure_stem(const std::string& prefix, const std::string& text) {
  std::string stem = prefix + text;
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
  return stem;
}

// 1.56 TB/s, 19.5 TFLOP/s: a rate with an SI prefix and three significant digits.
inline std::string si_rate(double value, const std::string& unit) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int p = 0;
  while (std::fabs(value) >= 1000 && p < 6) {
    value /= 1000;
    ++p;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g %s%s", value, prefixes[p], unit.c_str());
  return buf;
}

}  // namespace tilesim::analysis
