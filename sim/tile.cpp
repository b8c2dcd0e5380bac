#include "sim/tile.hpp"

namespace tilesim::sim {

Tile::Tile(const sc_core::sc_module_name& name) : sc_core::sc_module(name), arrival_("arrival") {
  SC_METHOD(on_arrival);
  sensitive << arrival_;
  dont_initialize();
}

void Tile::on_arrival() {
  // One time unit is one cycle: the tile must arrive exactly its share of the phase after the start.
  const auto now = static_cast<Cycles>(sc_core::sc_time_stamp().value());
  arrivals_->arrive(now - arrivals_->start_cycle == work_->cycles);
}

}  // namespace tilesim::sim
