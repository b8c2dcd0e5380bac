#pragma once
// The simulated IPU's available memory proportion on the command line (`tilesim run|sweep
// --available-memory-proportion P`) and in the text output: which plan each op got under it.
#include <optional>
#include <string>
#include <vector>

#include "results/backend.hpp"

namespace tilesim::cli {

// "" (option not given): nullopt. Otherwise a number in (0, 1], or an InputError naming the option,
// what it takes and what was given.
std::optional<double> parse_memory_proportion_option(const std::string& text);

// One line per simulated op whose plan records a temporary-memory budget: the proportion in force, the
// split, the plan's temporary bytes per tile against the budget, and whether it fit. "" when none does.
std::string format_plan_budgets(const std::vector<BackendResult>& results);

}  // namespace tilesim::cli
