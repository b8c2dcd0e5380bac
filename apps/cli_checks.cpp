#include "apps/cli_checks.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/limits.hpp"

namespace tilesim::cli {

namespace {

// What was given, for the message: a number as written, anything else quoted (an empty value is "").
std::string found_text(const std::string& text) {
  char* end = nullptr;
  if (!text.empty()) {
    std::strtod(text.c_str(), &end);
    if (end == text.c_str() + text.size()) return text;
  }
  return "\"" + text + "\" (not a number)";
}

// A compact bound: 1.5, 1e+06, 0.
std::string bound_text(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", x);
  return buffer;
}

}  // namespace

std::string integer_problem(const std::string& text, std::int64_t lo, std::int64_t hi, const std::string& what) {
  // from_chars takes no leading '+' and reports a value beyond int64 as out of range, where strtoll
  // (CLI11's conversion) would clamp it to the nearest bound.
  const std::size_t skip = !text.empty() && text[0] == '+' ? 1 : 0;
  std::int64_t value = 0;
  const char* first = text.data() + skip;
  const char* last = text.data() + text.size();
  const auto [end, error] = std::from_chars(first, last, value);
  const bool in_range = skip < text.size() && error == std::errc() && end == last && value >= lo && value <= hi;
  if (in_range) return "";
  return "expected " + what + " in " + limits::range_text(lo, hi) + ", found " + found_text(text);
}

std::string number_problem(const std::string& text, double lo, double hi, const std::string& what) {
  char* end = nullptr;
  const double value = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  const bool whole = !text.empty() && end == text.c_str() + text.size();
  if (whole && std::isfinite(value) && value >= lo && value <= hi) return "";
  return "expected " + what + " in [" + bound_text(lo) + ", " + bound_text(hi) + "], found " + found_text(text);
}

CLI::Validator integer_in(std::int64_t lo, std::int64_t hi, const std::string& what) {
  return CLI::Validator([lo, hi, what](std::string& text) { return integer_problem(text, lo, hi, what); },
                        what + " in " + limits::range_text(lo, hi));
}

CLI::Validator number_in(double lo, double hi, const std::string& what) {
  return CLI::Validator([lo, hi, what](std::string& text) { return number_problem(text, lo, hi, what); },
                        what + " in [" + bound_text(lo) + ", " + bound_text(hi) + "]");
}

CLI::Validator non_empty_path(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) {
        return text.empty() ? "expected " + what + " path, found an empty value (leave the flag out for the default)" : std::string();
      },
      "a non-empty path");
}

}  // namespace tilesim::cli
