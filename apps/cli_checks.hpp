#pragma once
// Checks of command-line values, run by CLI11 on the text before it converts it. A numeric value out
// of range, too large for its type (2^63 for --seed) or not a number at all is refused with the flag,
// the allowed range and what was found ("--seed: expected an integer in [0, 9223372036854775807], found
// 9223372036854775808"), instead of being clamped by the conversion or refused as "Could not convert".
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace tilesim::cli {

// "" when `text` is an integer in [lo, hi] (decimal, an optional sign, nothing else); otherwise what
// was expected and found: "expected WHAT in [lo, hi], found TEXT".
std::string integer_problem(const std::string& text, std::int64_t lo, std::int64_t hi, const std::string& what = "an integer");

// "" when `text` is a finite number in [lo, hi]; otherwise "expected WHAT in [lo, hi], found TEXT".
std::string number_problem(const std::string& text, double lo, double hi, const std::string& what = "a number");

// The same checks as CLI11 validators; CLI11 puts the flag's name before the message.
CLI::Validator integer_in(std::int64_t lo, std::int64_t hi, const std::string& what = "an integer");
CLI::Validator number_in(double lo, double hi, const std::string& what = "a number");

// An output path (--out DIR, --trace FILE) that is not empty: an empty one would otherwise mean "the
// default", silently replacing what is there. `what`: "a directory" or "a file".
CLI::Validator non_empty_path(const std::string& what);

}  // namespace tilesim::cli
