#include "sim/tile.hpp"

namespace tilesim::sim {

Tile::Tile(const sc_core::sc_module_name& name) : sc_core::sc_module(name), wake_("wake"), arrival_("arrival") {
  SC_METHOD(on_wake);
  sensitive << wake_;
  dont_initialize();
}

void Tile::on_wake() {
  // One time unit is one cycle; zero cycles is a delta notification, still after this evaluation.
  arrival_.notify(sc_core::sc_time::from_value(static_cast<sc_core::sc_time::value_type>(work_->cycles)));
}

}  // namespace tilesim::sim
