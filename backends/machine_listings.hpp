#pragma once
// `tilesim machines`: the shipped IPU and GPU machine files with their key figures, as JSON objects
// (one per machine) and as the text table of each family.
#include <string>

#include <nlohmann/json.hpp>

namespace tilesim::backends {

nlohmann::json ipu_machine_summaries();
std::string ipu_machine_table(const nlohmann::json& summaries);

nlohmann::json gpu_machine_summaries();
// Empty when there are no summaries; otherwise a blank line, then the table.
std::string gpu_machine_table(const nlohmann::json& summaries);

}  // namespace tilesim::backends
