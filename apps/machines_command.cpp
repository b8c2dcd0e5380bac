// tilesim machines: the shipped machine files and their key figures, family by family (each family
// lists its own, backends/machine_listings.hpp).
#include <iostream>
#include <memory>

#include "apps/command_line.hpp"
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

// The subcommand's options on the command line (apps/command_line.hpp).
void add_machines_command(CLI::App& app, std::vector<Command>& commands) {
  struct Options {
    bool machines_json = false;
  };
  const auto o = std::make_shared<Options>();
  bool& machines_json = o->machines_json;
  auto* machines_cmd = app.add_subcommand("machines", "List the machine files and their key figures");
  machines_cmd->add_flag("--json", machines_json, "Print JSON");
  commands.push_back({machines_cmd, [o] {
    return machines_command(o->machines_json);
  }});
}

}  // namespace tilesim::cli
