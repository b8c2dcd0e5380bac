#pragma once
// Which ops the analysis commands (plot surface, plot sensitivity, report) work on.
#include <string>
#include <vector>

#include "analysis/results_table.hpp"

namespace tilesim::analysis {

// The items of a comma-separated option ("ipu:bow,gpu-model:a100-40gb"), empty ones left out.
std::vector<std::string> split_list(const std::string& list);

// --ops when given (checked against the ops tilesim knows), else every op of the rows, gather first.
std::vector<std::string> ops_to_draw(const std::vector<ResultRow>& rows, const std::string& ops_arg);

}  // namespace tilesim::analysis
