#pragma once
// `tilesim backends`: every family described by what it declares, as JSON and as text.
#include <string>

#include <nlohmann/json.hpp>

namespace tilesim::backends {

// One object per family, in registry order: family, grammar, kind, summary, modes (name, default,
// description), machine (in_name, default, shipped, machine_file; or runs_on), built, optional, build
// (what was built, or why not), device (for a family that needs one: present, detail) and available.
// `probe_devices` asks the driver whether a GPU is there (can take a second).
nlohmann::json describe_families(bool probe_devices);

// The same as text, a few lines per family.
std::string families_text(const nlohmann::json& families);

}  // namespace tilesim::backends
