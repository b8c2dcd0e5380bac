#include "sim/version.hpp"

#include <systemc>

namespace tilesim::sim {
std::string systemc_version() { return SC_VERSION; }
}  // namespace tilesim::sim
