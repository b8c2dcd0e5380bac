#pragma once
// The order in which a phase's tiles are started and their byte work run. A phase's tiles are
// independent by the BSP rule (a tile reads only its own SRAM until the exchange), so any order must
// give the same bytes and cycles: the program's order by default, or, for tests that look for a hidden
// dependency on it, a permutation drawn from a seed (Engine::shuffle_same_instant_order).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace tilesim::sim {

// nullopt: the program's order. Takes effect at the next phase.
void set_phase_order_seed(std::optional<std::uint64_t> seed);
bool phase_order_shuffled();

// Fills `order` with the positions 0 .. count-1 in the order to visit them in phase `phase_index` of a
// run: the identity, or the seed's permutation for that phase (each phase its own). The caller's buffer
// is reused from phase to phase.
void fill_phase_tile_order(std::vector<std::size_t>& order, std::size_t count, std::size_t phase_index);

}  // namespace tilesim::sim
