#pragma once
// Which tilesim produced a result: its version and the git revision of the checkout it was built
// from (`git describe --always --dirty` at build time; "unknown" outside a git checkout).
#include <string>

#include <nlohmann/json.hpp>

namespace tilesim {

std::string tool_revision();

// {"name": "tilesim", "version": "0.1.0", "revision": "..."}: the "tool" of report.json and sweep.json.
nlohmann::json tool_identity();

}  // namespace tilesim
