#pragma once
// Which plan each op of a simulated IPU got under its available memory proportion, as `tilesim run`
// prints it.
#include <string>
#include <vector>

#include "results/backend.hpp"

namespace tilesim::runs {

// One line per simulated op whose plan records a temporary-memory budget: the proportion in force, the
// split, the plan's temporary bytes per tile against the budget, and whether it fit. "" when none does.
std::string format_plan_budgets(const std::vector<BackendResult>& results);

}  // namespace tilesim::runs
