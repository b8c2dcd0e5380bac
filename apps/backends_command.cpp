// tilesim backends [--json]: every backend family as it describes itself (backends/registry.hpp): its
// names, kind, modes and machines, and whether this build has it (and, for a GPU backend, whether this
// host has a GPU).
#include <iostream>

#include "apps/commands.hpp"
#include "backends/family_listing.hpp"

namespace tilesim::cli {

int backends_command(bool json) {
  const nlohmann::json families = backends::describe_families(true);
  if (json) std::cout << families.dump(2) << std::endl;
  else std::cout << backends::families_text(families);
  return 0;
}

}  // namespace tilesim::cli
