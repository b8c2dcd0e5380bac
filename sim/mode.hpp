#pragma once
// Whether the engine moves real bytes or only counts cycles (Engine::load, sim/engine.hpp).
namespace tilesim::sim {

enum class Mode {
  functional,   // vertices execute and exchanges copy real bytes between tile arenas
  timing_only,  // same cycles, no bytes moved, no arenas allocated
};

}  // namespace tilesim::sim
