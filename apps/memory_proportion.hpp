#pragma once
// The simulated IPU's available memory proportion on the command line (`tilesim run|sweep
// --available-memory-proportion P`), checked into a number.
#include <optional>
#include <string>

namespace tilesim::cli {

// "" (option not given): nullopt. Otherwise a number in (0, 1], or an InputError naming the option,
// what it takes and what was given.
std::optional<double> parse_memory_proportion_option(const std::string& text);

}  // namespace tilesim::cli
