#pragma once
#include <string>

namespace tilesim::sim {
// The SystemC library's own version string, for `tilesim --version`.
std::string systemc_version();
}  // namespace tilesim::sim
