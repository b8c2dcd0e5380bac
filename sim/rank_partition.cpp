#include "sim/rank_partition.hpp"

#include <stdexcept>

namespace tilesim::sim {

RankPartition partition_over_ranks(const MachineConfig& config, std::int32_t ranks, std::int32_t rank) {
  if (ranks < 1 || rank < 0 || rank >= ranks) {
    throw std::logic_error("partition_over_ranks: rank " + std::to_string(rank) + " of " + std::to_string(ranks) +
                           " ranks does not exist");
  }
  RankPartition p;
  p.ranks = ranks;
  p.rank = rank;
  const std::int32_t chips = config.num_chips();
  // Whole chips only: a chip's tiles share one exchange, and its links are the only traffic a rank
  // boundary may cut.
  if (ranks > 1 && config.tiles_per_chip > 0 && chips >= ranks && chips % ranks == 0) {
    p.tiles_per_rank = chips / ranks * config.tiles_per_chip;
  }
  return p;
}

std::string describe(const RankPartition& partition, const MachineConfig& config) {
  if (!partition.distributed()) {
    return "every tile on each of " + std::to_string(partition.ranks) + (partition.ranks == 1 ? " rank" : " ranks");
  }
  const TileId first = partition.rank * partition.tiles_per_rank;
  const TileId last = first + partition.tiles_per_rank - 1;
  return "chips " + std::to_string(config.chip_of(first)) + "-" + std::to_string(config.chip_of(last)) + " of " +
         std::to_string(config.num_chips()) + " (tiles " + std::to_string(first) + "-" + std::to_string(last) + ") on rank " +
         std::to_string(partition.rank) + " of " + std::to_string(partition.ranks);
}

}  // namespace tilesim::sim
