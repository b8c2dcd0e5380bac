// The tiles a phase involves, shared by the compute and exchange passes (compiled_program_phase.hpp).
#include "sim/compiled_program_phase.hpp"

#include <algorithm>
#include <utility>

namespace tilesim::sim::compile {

PhaseTiles::PhaseTiles(std::int32_t num_tiles) {
  const auto tiles = static_cast<std::size_t>(num_tiles);
  items_.assign(tiles, 0);
  involved_.assign(tiles, 0);
}

void PhaseTiles::sort_touched() {
  // A phase on many tiles reads them off the flags in ascending order, one pass over the machine's
  // tiles, instead of sorting them (about a sixth of the compile passes' time on the hydronet grid);
  // one on a few tiles sorts its short list.
  if (touched_.size() * 8 >= involved_.size()) {
    touched_.clear();
    for (std::size_t t = 0; t < involved_.size(); ++t)
      if (involved_[t]) touched_.push_back(static_cast<TileId>(t));
    return;
  }
  std::sort(touched_.begin(), touched_.end());
}

void PhaseTiles::counts_to_positions(std::uint32_t base) {
  std::uint32_t position = base;
  for (TileId tile : touched_) {
    auto& count = items_[static_cast<std::size_t>(tile)];
    const auto n = count;
    count = position;
    position += n;
  }
}

void PhaseTiles::finish(CompiledPhase& phase, std::vector<CompiledPhase>& phases) {
  for (const auto& work : phase.tiles) {
    if (phase.slowest_tile < 0 || work.cycles > phase.slowest_cycles) {
      phase.slowest_cycles = work.cycles;
      phase.slowest_tile = work.tile;
    }
  }
  for (TileId tile : touched_) {
    const auto t = static_cast<std::size_t>(tile);
    items_[t] = 0;
    involved_[t] = 0;
  }
  touched_.clear();
  phases.push_back(std::move(phase));
}

}  // namespace tilesim::sim::compile
