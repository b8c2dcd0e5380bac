// tilesim backends [--json]: every backend family as it describes itself (backends/registry.hpp): its
// names, kind, modes and machines, and whether this build has it (and, for a GPU backend, whether this
// host has a GPU).
#include <iostream>
#include <memory>

#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "backends/family_listing.hpp"

namespace tilesim::cli {

int backends_command(bool json) {
  const nlohmann::json families = backends::describe_families(true);
  if (json) std::cout << families.dump(2) << std::endl;
  else std::cout << backends::families_text(families);
  return 0;
}

// The subcommand's options on the command line (apps/command_line.hpp).
void add_backends_command(CLI::App& app, std::vector<Command>& commands) {
  struct Options {
    bool backends_json = false;
  };
  const auto o = std::make_shared<Options>();
  bool& backends_json = o->backends_json;
  auto* backends_cmd = app.add_subcommand(
      "backends", "List the backend families: names, kind, modes, machines, and whether each is built in (and why not)");
  backends_cmd->add_flag("--json", backends_json, "Print JSON");
  commands.push_back({backends_cmd, [o] {
    return backends_command(o->backends_json);
  }});
}

}  // namespace tilesim::cli
