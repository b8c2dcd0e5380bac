#pragma once
// Ring collectives as engine programs: the supersteps of a reduce-scatter and an all-gather around rings of
// IPUs, every IPU's data spread over its tiles and each tile sending its piece to the same tile of the next
// IPU of its ring. Pure builders (no engine): system_collectives.cpp runs them.
#include <cstdint>
#include <vector>

#include "models/ipu/machine/machine_file.hpp"
#include "sim/program.hpp"

namespace tilesim::ipu {

// Elements [begin, end) of one tile's share of an IPU's data.
struct TileRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t size() const { return end - begin; }
};

// A ring's region of each tile's share: the same on every IPU of a ring (tile t of every member reduces
// elements region(t) of its share).
using TileRegion = std::vector<TileRange>;

// Piece j of `parts` of a range: contiguous, sizes differing by at most one element.
TileRange ring_piece(const TileRange& range, std::int64_t parts, std::int64_t j);

// The IPUs of `system` in an order in which each is joined to the next, and the last to the first, by one
// link group: within a machine, up one side of its ladder and down the other (IPUs 0, 1, 3, 5, .., 4, 2),
// then over the gateway to the next machine. Every IPU, in that order.
std::vector<std::int32_t> hamiltonian_ring(const IpuMachine& system);

// An all-reduce (sum) program under construction: each IPU of `system` holds `elements_per_ipu` float32
// elements (one replica's data, or its share of a replica's), laid out linearly over its tiles
// (linear_layout), in buffer `acc` of each tile; `recv` receives one piece per ring step.
class RingCollectiveBuilder {
 public:
  RingCollectiveBuilder(const IpuMachine& system, std::int64_t elements_per_ipu, std::string name);

  // The tiles' shares: region of the whole data.
  TileRegion whole() const;
  // After a reduce_scatter over rings of `ring_size` with region `region`, the member at position q of its
  // ring holds the reduced piece (q + 1) mod ring_size of `region` (on every tile): that piece.
  TileRegion owned_after_reduce_scatter(const TileRegion& region, std::int64_t ring_size, std::int64_t position) const;

  // Appends ring_size - 1 reduce-scatter steps over every ring at once (each ring a list of IPUs, all rings
  // the same size; ring r reduces region ring_regions[r] of each member's tiles): in step s the member at
  // position q sends piece (q - s) mod ring_size to the next member, which adds it to its own in the next
  // superstep's compute phase.
  void reduce_scatter(const std::vector<std::vector<std::int32_t>>& rings, const std::vector<TileRegion>& ring_regions);
  // Appends ring_size - 1 all-gather steps (the first in the superstep of the last reduce-scatter's sums):
  // each member passes on the reduced piece it holds or last received, into the next member's data.
  void all_gather(const std::vector<std::vector<std::int32_t>>& rings, const std::vector<TileRegion>& ring_regions);
  // Runs any sums still pending in a last compute-only superstep.
  void finish();

  // The program; buffers `acc` of IPU i's tile t is acc_buffer(i, t).
  const sim::Program& program() const { return program_; }
  sim::Program take_program() { return std::move(program_); }
  sim::BufferId acc_buffer(std::int32_t ipu, std::int64_t tile) const;
  std::int64_t tiles_used() const { return tiles_used_; }
  const std::vector<std::int64_t>& tile_elements() const { return tile_elements_; }

 private:
  sim::TileId global_tile(std::int32_t ipu, std::int64_t tile) const;
  // Step s of a reduce-scatter (sums pending for the next superstep) or, with `gather`, of an all-gather.
  void ring_step(const std::vector<std::vector<std::int32_t>>& rings, const std::vector<TileRegion>& ring_regions,
                 std::int64_t s, bool gather);
  void add_sums(sim::ComputeSet& compute, std::int32_t ipu, const TileRegion& region, std::int64_t parts, std::int64_t j);

  const IpuMachine& system_;
  sim::Program program_;
  std::int64_t tiles_used_ = 0;
  std::vector<std::int64_t> tile_elements_;   // share of each used tile
  std::vector<std::int64_t> tile_first_;      // first element of each used tile's share
  std::vector<sim::BufferId> acc_;            // [ipu * tiles_used + t]
  std::vector<sim::BufferId> recv_;
  // The sums the next superstep must run (the pieces received by the last reduce-scatter exchange).
  struct PendingSum {
    std::int32_t ipu;
    TileRegion region;
    std::int64_t parts;
    std::int64_t piece;
  };
  std::vector<PendingSum> pending_;
  sim::ComputeSet take_pending(const std::string& name);
};

}  // namespace tilesim::ipu
