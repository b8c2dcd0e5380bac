#pragma once
// Which MPI rank holds which tiles when the engine is spread over ranks (sim/rank_messages.hpp moves the
// bytes between them). A machine of C chips run by K ranks, K > 1 dividing C, gives rank r the chips
// [r C/K, (r+1) C/K): it allocates, runs and copies for those chips' tiles alone. Any other machine
// (one chip, fewer chips than ranks, a count K does not divide) is held whole by every rank, which then
// runs it all as one process would. Pure, so tests can ask without MPI.
#include <cstdint>
#include <string>

#include "sim/machine_config.hpp"

namespace tilesim::sim {

struct RankPartition {
  std::int32_t ranks = 1;
  std::int32_t rank = 0;
  TileId tiles_per_rank = 0;  // 0: not spread, every rank holds every tile

  bool distributed() const { return tiles_per_rank > 0; }
  // The rank that holds a tile's SRAM and runs its work.
  std::int32_t owner(TileId tile) const { return distributed() ? tile / tiles_per_rank : rank; }
  bool owns(TileId tile) const { return owner(tile) == rank; }
};

// How `ranks` ranks share `config`, as seen by `rank`. Throws std::logic_error for a rank outside
// [0, ranks) or fewer than one rank.
RankPartition partition_over_ranks(const MachineConfig& config, std::int32_t ranks, std::int32_t rank);

// "chips 4-7 of 16 (tiles 5888-11775) on rank 1 of 4", or "every tile on each of K ranks" (messages).
std::string describe(const RankPartition& partition, const MachineConfig& config);

}  // namespace tilesim::sim
