#pragma once
// One tile as a SystemC module: an SC_METHOD run once per phase, never per cycle. Started, the tile's
// arrival at the sync is due as many cycles later as its share of the phase takes (a timed
// notification); its method then runs and reports the arrival to the phase's arrival count. The
// functional side of that share (its vertices or exchange copies) runs when the phase starts, with
// every other tile's (WorkExecutor::run_phase), so that a large phase can use the host's cores.
// Engine-internal.
#include <cstdint>
#include <systemc>

#include "sim/compiled_program.hpp"

namespace tilesim::sim {

// The arrivals of one phase's tiles at the sync: a count, so a phase of n tiles costs O(n) to wait
// for (an and-list of n arrival events cost O(n^2) to build, over a second at 94,208 tiles). Each tile
// also says whether it arrived when its precomputed cycles said it would.
struct PhaseArrivals {
  std::int64_t pending = 0;
  Cycles start_cycle = 0;   // when the tiles were started
  bool all_on_time = true;
  sc_core::sc_event all_arrived;  // notified when the last tile arrives

  void arrive(bool on_time) {
    all_on_time = all_on_time && on_time;
    if (--pending == 0) all_arrived.notify();  // immediate: the controller runs in this evaluation
  }
};

class Tile : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Tile);
  explicit Tile(const sc_core::sc_module_name& name);

  // Starts the tile's share of a phase now; it arrives work.cycles later (zero cycles: in the next
  // delta cycle). `work` and `arrivals` must stay alive until then.
  void start(const TileWork& work, PhaseArrivals& arrivals) {
    work_ = &work;
    arrivals_ = &arrivals;
    arrival_.notify(sc_core::sc_time::from_value(static_cast<sc_core::sc_time::value_type>(work.cycles)));
  }

 private:
  void on_arrival();

  sc_core::sc_event arrival_;
  const TileWork* work_ = nullptr;
  PhaseArrivals* arrivals_ = nullptr;
};

}  // namespace tilesim::sim
