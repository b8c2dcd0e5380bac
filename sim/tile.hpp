#pragma once
// One tile as a SystemC module: an SC_METHOD woken once per phase, never per cycle. On wake-up it does
// its share of the phase (in functional mode: runs its vertices or its exchange copies) and signals its
// arrival at the sync as many cycles later as its work takes, by a timed notification of its arrival
// event. Engine-internal.
#include <systemc>

#include "sim/compiled_program.hpp"

namespace tilesim::sim {

// The functional side of a tile's phase work; the tile calls it on wake-up.
class TileWorkRunner {
 public:
  virtual ~TileWorkRunner() = default;
  // Must not throw: SystemC would turn the exception into a fatal report that ends the simulation.
  virtual void run(const TileWork& work) noexcept = 0;
};

class Tile : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Tile);
  Tile(const sc_core::sc_module_name& name, TileWorkRunner& runner);

  // Starts the tile's share of a phase now; arrival() fires work.cycles later. `work` must stay alive
  // until then. Called by the sync controller from its own process (an immediate notification, so the
  // tile runs in the same evaluation phase).
  void start(const TileWork& work) {
    work_ = &work;
    wake_.notify();
  }
  const sc_core::sc_event& arrival() const { return arrival_; }

 private:
  void on_wake();

  TileWorkRunner& runner_;
  sc_core::sc_event wake_;
  sc_core::sc_event arrival_;
  const TileWork* work_ = nullptr;
};

}  // namespace tilesim::sim
