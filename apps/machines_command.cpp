// tilesim machines: the shipped machine files and their key figures, family by family (each family
// lists its own, backends/machine_listings.hpp).
#include <iostream>

#include "apps/commands.hpp"
#include "backends/registry.hpp"

namespace tilesim::cli {

int machines_command(bool json) {
  nlohmann::json list = nlohmann::json::array();
  std::string text;
  for (const backends::BackendFamily* family : backends::all_families()) {
    const nlohmann::json summaries = family->machine_summaries();
    for (const auto& s : summaries) list.push_back(s);
    text += family->machine_table(summaries);
  }
  if (json) std::cout << list.dump(2) << std::endl;
  else std::cout << text;
  return 0;
}

}  // namespace tilesim::cli
