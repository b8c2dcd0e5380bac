#pragma once
// What every pass of compile_program (sim/compiled_program.hpp) shares while it builds a phase: the
// numbers and names in its messages, 32-bit indices, the interned trace labels, and the tiles the phase
// involves with their items grouped by tile. Engine-internal.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/compiled_program.hpp"

namespace tilesim::sim::compile {

inline std::string str(std::int64_t value) { return std::to_string(value); }

inline std::string machine_suffix(const MachineConfig& config) { return " (machine " + config.name + ")"; }

// "program P: superstep S", the start of every message about a superstep.
inline std::string where(const Program& program, const Superstep& step) {
  return "program " + program.name + ": superstep " + step.name;
}

// TileWork and VertexItem keep 32-bit indices to stay small; a program that large is a planner bug.
inline std::uint32_t index32(std::size_t index, const std::string& what) {
  if (index > std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error(what + ": more than 2^32 items in one program");
  }
  return static_cast<std::uint32_t>(index);
}

// Interns trace slice names, so a phase stores one index per tile instead of a string.
class LabelTable {
 public:
  explicit LabelTable(std::vector<std::string>& labels) : labels_(labels) {}

  std::uint32_t intern(const std::string& label) {
    // Consecutive vertices usually run the same codelet: skip the hash then.
    if (have_last_ && label == labels_[last_]) return last_;
    auto [it, inserted] = ids_.try_emplace(label, static_cast<std::uint32_t>(labels_.size()));
    if (inserted) labels_.push_back(label);
    last_ = it->second;
    have_last_ = true;
    return last_;
  }
  const std::string& operator[](std::uint32_t id) const { return labels_[id]; }

 private:
  std::vector<std::string>& labels_;
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::uint32_t last_ = 0;
  bool have_last_ = false;
};

// The tiles one phase involves and a count of items (vertices or copies) per tile. Indexed by tile and
// reset for the touched tiles only, so a phase costs in proportion to its work rather than to the
// machine's size.
class PhaseTiles {
 public:
  explicit PhaseTiles(std::int32_t num_tiles);

  void touch(TileId tile) {
    auto& flag = involved_[static_cast<std::size_t>(tile)];
    if (!flag) {
      flag = 1;
      touched_.push_back(tile);
    }
  }
  // The tile's item count, or after counts_to_positions its next item's position.
  std::uint32_t& items(TileId tile) { return items_[static_cast<std::size_t>(tile)]; }
  const std::vector<TileId>& touched() const { return touched_; }
  void sort_touched();

  // Items of the touched tiles laid out contiguously in ascending tile order: turns per-tile counts
  // into start positions from `base`.
  void counts_to_positions(std::uint32_t base);

  // Finds the phase's slowest tile, resets the touched tiles for the next phase and appends the phase.
  void finish(CompiledPhase& phase, std::vector<CompiledPhase>& phases);

 private:
  std::vector<TileId> touched_;
  std::vector<char> involved_;
  std::vector<std::uint32_t> items_;
};

}  // namespace tilesim::sim::compile
