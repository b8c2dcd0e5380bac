#pragma once
// Graph-aware placement of node rows on the IPU's tiles, and what it buys: the exchange of one
// message-passing step (each edge's message is computed on its destination's tile, so x[src] travels
// from src's tile to dst's tile, once per distinct (row, destination tile)) planned, built as a BSP
// program and run on the engine in timing-only mode. Graphcore's planners assume uniform indices and
// spread rows linearly; a bandwidth-reducing relabelling or a min-edge-cut partition (computed by the
// caller: workloads/graphs/algorithms.hpp) can keep most messages on their tile.
//
// The planning functions are pure; simulate_placement only sequences the program on the engine.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/ipu/machine/machine_file.hpp"
#include "sim/program.hpp"
#include "sim/stats.hpp"

namespace tilesim::ipu {

using TileOfRow = std::vector<sim::TileId>;

// Row r on tile r / ceil(N / T): whole rows in equal contiguous blocks, as a row-major tensor nobody
// planned for is spread (poplar's linear mapping, here at row granularity).
TileOfRow linear_row_tiles(std::int64_t num_rows, std::int32_t num_tiles);
// The linear spread of the relabelled rows: row r goes where label_of_row[r] would go.
TileOfRow relabelled_row_tiles(const std::vector<std::int32_t>& label_of_row, std::int32_t num_tiles);
// Part p on tile p * T / P (parts numbered from 0; with P = T, part p on tile p).
TileOfRow part_row_tiles(const std::vector<std::int32_t>& part_of_row, std::int32_t num_parts, std::int32_t num_tiles);

// The exchange of one message-passing step under a placement.
struct MessageExchangePlan {
  std::int64_t num_rows = 0;
  std::int64_t row_bytes = 0;
  std::int64_t edges = 0;
  std::int64_t cut_edges = 0;           // edges whose source and destination rows are on different tiles
  std::int64_t row_transfers = 0;       // distinct (row, destination tile) pairs off the row's tile
  std::int64_t exchange_bytes = 0;      // row_transfers x row_bytes: bytes received over all tiles
  std::int64_t max_rows_per_tile = 0;   // rows a tile owns (memory balance)
  std::int64_t max_edges_per_tile = 0;  // messages a tile computes (compute balance)
  std::int64_t max_halo_rows_per_tile = 0;
  sim::TileId busiest_receiver = -1;    // the tile receiving the most rows
  std::int64_t max_bytes_received_per_tile = 0;
  std::int64_t max_bytes_sent_per_tile = 0;  // a row multicast to several tiles is sent once
  // Rows are exchanged in `rounds` column slices when a tile's received rows would not fit its SRAM
  // (within the planner's memory fraction) at once; slice_bytes per row per round (last one shorter).
  std::int32_t rounds = 1;
  std::int64_t slice_bytes = 0;
  std::int64_t max_tile_bytes = 0;      // owned rows + one round's received slices, on the fullest tile

  // Per source row, the tiles it is sent to (CSR over rows, ascending tiles).
  std::vector<std::int64_t> dst_tiles_begin;
  std::vector<sim::TileId> dst_tiles;

  double cut_fraction() const { return edges == 0 ? 0.0 : static_cast<double>(cut_edges) / static_cast<double>(edges); }
};

// Plans the exchange. Throws tilesim::PlanError (exit 3) if a tile's own rows alone do not fit its
// SRAM, naming the tile, the bytes it needs and has, and the next step.
MessageExchangePlan plan_message_exchange(const std::vector<std::int32_t>& src, const std::vector<std::int32_t>& dst,
                                          const TileOfRow& tile_of_row, std::int64_t row_bytes, const IpuMachine& machine);

// The BSP program: owned-row and received-row buffers per tile, one superstep per round whose exchange
// multicasts each row's slice to its destination tiles.
sim::Program build_message_exchange_program(const MessageExchangePlan& plan, const TileOfRow& tile_of_row,
                                            const IpuMachine& machine);

struct PlacementResult {
  std::string name;
  MessageExchangePlan plan;
  sim::RunStats stats;
  double time_s = 0;  // simulated device time of the exchange step
  nlohmann::json to_json() const;  // the figures, without the per-row lists
};

// Plans, builds and runs (timing-only) the exchange of one placement.
PlacementResult simulate_placement(const std::string& name, const std::vector<std::int32_t>& src,
                                   const std::vector<std::int32_t>& dst, const TileOfRow& tile_of_row,
                                   std::int64_t row_bytes, const IpuMachine& machine);

}  // namespace tilesim::ipu
