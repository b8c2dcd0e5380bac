#pragma once
// Dataset-shaped presets (presets.json beside this file; TILESIM_GRAPH_PRESETS names another file):
// a generator with the node, edge and feature counts and degree character of a real dataset, every
// figure with its source.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/graphs/generators.hpp"

namespace tilesim::workloads::graphs {

enum class PresetGenerator { chung_lu, molecules };

struct Preset {
  std::string name;
  std::string description;
  PresetGenerator generator = PresetGenerator::chung_lu;
  PowerLawParams power_law;   // chung_lu
  MoleculeParams molecules;   // molecules (num_graphs is the default batch)
  std::int64_t num_features = 0;
};

std::string presets_file();
// Names in the presets file, sorted.
std::vector<std::string> preset_names();
// Throws InputError naming `file` and `json_path` (where the user wrote the name) for an unknown
// preset, and the presets file and path for a malformed presets file.
Preset load_preset(const std::string& name, const std::string& file, const std::string& json_path);

}  // namespace tilesim::workloads::graphs
