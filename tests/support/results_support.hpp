#pragma once
// Test helpers over results.csv files, for the sweep tests.
#include <filesystem>
#include <map>
#include <string>

#include "analysis/results_table.hpp"

namespace tilesim_test {

// Every point key of a results.csv with how often it is there.
inline std::map<std::string, int> key_counts(const std::filesystem::path& csv) {
  std::map<std::string, int> counts;
  for (const auto& row : tilesim::analysis::read_results_csv(csv.string())) ++counts[tilesim::analysis::point_key(row)];
  return counts;
}

}  // namespace tilesim_test
