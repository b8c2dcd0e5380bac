#pragma once
// One tile as a SystemC module: an SC_METHOD woken once per phase, never per cycle. On wake-up it
// signals its arrival at the sync as many cycles later as its share of the phase takes, by a timed
// notification of its arrival event. The functional side of that share (its vertices or exchange
// copies) runs when the phase starts, with every other tile's (WorkExecutor::run_phase), so that a
// large phase can use the host's cores. Engine-internal.
#include <systemc>

#include "sim/compiled_program.hpp"

namespace tilesim::sim {

class Tile : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Tile);
  explicit Tile(const sc_core::sc_module_name& name);

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

  sc_core::sc_event wake_;
  sc_core::sc_event arrival_;
  const TileWork* work_ = nullptr;
};

}  // namespace tilesim::sim
