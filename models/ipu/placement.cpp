#include "models/ipu/placement.hpp"

#include <algorithm>
#include <stdexcept>

#include "common/error.hpp"
#include "models/ipu/planning/blocks.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "sim/engine.hpp"

namespace tilesim::ipu {

TileOfRow linear_row_tiles(std::int64_t num_rows, std::int32_t num_tiles) {
  TileOfRow tiles(static_cast<std::size_t>(num_rows));
  const std::int64_t per_tile = std::max<std::int64_t>(1, ceil_div(num_rows, num_tiles));
  for (std::int64_t r = 0; r < num_rows; ++r) tiles[static_cast<std::size_t>(r)] = static_cast<sim::TileId>(r / per_tile);
  return tiles;
}

TileOfRow relabelled_row_tiles(const std::vector<std::int32_t>& label_of_row, std::int32_t num_tiles) {
  const TileOfRow by_label = linear_row_tiles(static_cast<std::int64_t>(label_of_row.size()), num_tiles);
  TileOfRow tiles(label_of_row.size());
  for (std::size_t r = 0; r < label_of_row.size(); ++r) tiles[r] = by_label[static_cast<std::size_t>(label_of_row[r])];
  return tiles;
}

TileOfRow part_row_tiles(const std::vector<std::int32_t>& part_of_row, std::int32_t num_parts, std::int32_t num_tiles) {
  TileOfRow tiles(part_of_row.size());
  for (std::size_t r = 0; r < part_of_row.size(); ++r) {
    tiles[r] = static_cast<sim::TileId>(static_cast<std::int64_t>(part_of_row[r]) * num_tiles / std::max(1, num_parts));
  }
  return tiles;
}

namespace {

// SRAM a tile needs: its rows, then one round's received slices (each buffer aligned as the engine lays it out).
std::int64_t tile_bytes(std::int64_t rows, std::int64_t row_bytes, std::int64_t halo_rows, std::int64_t slice_bytes) {
  return sim::align_buffer_offset(rows * row_bytes) + halo_rows * slice_bytes;
}

}  // namespace

MessageExchangePlan plan_message_exchange(const std::vector<std::int32_t>& src, const std::vector<std::int32_t>& dst,
                                          const TileOfRow& tile_of_row, std::int64_t row_bytes, const IpuMachine& machine) {
  const std::int32_t num_tiles = machine.chip.num_tiles;
  MessageExchangePlan p;
  p.num_rows = static_cast<std::int64_t>(tile_of_row.size());
  p.row_bytes = row_bytes;
  p.edges = static_cast<std::int64_t>(src.size());
  for (sim::TileId t : tile_of_row) {
    if (t < 0 || t >= num_tiles) throw std::logic_error("placement puts a row on tile " + std::to_string(t));
  }

  std::vector<std::int64_t> rows(static_cast<std::size_t>(num_tiles), 0), edges(static_cast<std::size_t>(num_tiles), 0);
  for (sim::TileId t : tile_of_row) ++rows[static_cast<std::size_t>(t)];
  // Off-tile destinations per source row, as CSR: count, fill, then sort and drop repeats per row.
  std::vector<std::int64_t> begin(static_cast<std::size_t>(p.num_rows) + 1, 0);
  for (std::size_t e = 0; e < src.size(); ++e) {
    const sim::TileId ts = tile_of_row[static_cast<std::size_t>(src[e])], td = tile_of_row[static_cast<std::size_t>(dst[e])];
    ++edges[static_cast<std::size_t>(td)];
    if (ts != td) {
      ++p.cut_edges;
      ++begin[static_cast<std::size_t>(src[e]) + 1];
    }
  }
  for (std::size_t r = 1; r < begin.size(); ++r) begin[r] += begin[r - 1];
  std::vector<sim::TileId> tiles(static_cast<std::size_t>(p.cut_edges));
  {
    std::vector<std::int64_t> next(begin.begin(), begin.end() - 1);
    for (std::size_t e = 0; e < src.size(); ++e) {
      const sim::TileId ts = tile_of_row[static_cast<std::size_t>(src[e])], td = tile_of_row[static_cast<std::size_t>(dst[e])];
      if (ts != td) tiles[static_cast<std::size_t>(next[static_cast<std::size_t>(src[e])]++)] = td;
    }
  }
  p.dst_tiles_begin.assign(static_cast<std::size_t>(p.num_rows) + 1, 0);
  std::vector<std::int64_t> halo(static_cast<std::size_t>(num_tiles), 0), sent(static_cast<std::size_t>(num_tiles), 0);
  for (std::int64_t r = 0; r < p.num_rows; ++r) {
    auto first = tiles.begin() + begin[static_cast<std::size_t>(r)], last = tiles.begin() + begin[static_cast<std::size_t>(r) + 1];
    std::sort(first, last);
    last = std::unique(first, last);
    for (auto it = first; it != last; ++it) {
      p.dst_tiles.push_back(*it);
      ++halo[static_cast<std::size_t>(*it)];
    }
    if (first != last) ++sent[static_cast<std::size_t>(tile_of_row[static_cast<std::size_t>(r)])];
    p.dst_tiles_begin[static_cast<std::size_t>(r) + 1] = static_cast<std::int64_t>(p.dst_tiles.size());
  }
  p.row_transfers = static_cast<std::int64_t>(p.dst_tiles.size());
  p.exchange_bytes = p.row_transfers * row_bytes;
  for (std::int32_t t = 0; t < num_tiles; ++t) {
    const auto k = static_cast<std::size_t>(t);
    p.max_rows_per_tile = std::max(p.max_rows_per_tile, rows[k]);
    p.max_edges_per_tile = std::max(p.max_edges_per_tile, edges[k]);
    if (halo[k] > p.max_halo_rows_per_tile) {
      p.max_halo_rows_per_tile = halo[k];
      p.busiest_receiver = t;
    }
    p.max_bytes_sent_per_tile = std::max(p.max_bytes_sent_per_tile, sent[k] * row_bytes);
  }
  p.max_bytes_received_per_tile = p.max_halo_rows_per_tile * row_bytes;

  // Rounds: the fewest column slices (in the planner's column grain) for which every tile's rows plus
  // one slice of its received rows fit the planner's share of SRAM; failing that, the whole SRAM.
  const std::int64_t grain = std::max<std::int64_t>(1, machine.planner.column_grain_bytes);
  const std::int64_t grains_per_row = ceil_div(row_bytes, grain);
  const std::int64_t sram = machine.chip.sram_bytes_per_tile;
  auto need_for = [&](std::int64_t slice) {
    std::int64_t most = 0;
    for (std::int32_t t = 0; t < num_tiles; ++t) {
      most = std::max(most, tile_bytes(rows[static_cast<std::size_t>(t)], row_bytes, halo[static_cast<std::size_t>(t)], slice));
    }
    return most;
  };
  // More rounds mean thinner slices and never more bytes per tile, so the fewest rounds that fit are
  // found by bisection: a row of billions of bytes costs a few dozen tries, not one per grain.
  auto slice_for = [&](std::int64_t r) { return std::min(row_bytes, ceil_div(grains_per_row, r) * grain); };
  for (const double budget : {machine.planner.memory_fraction * static_cast<double>(sram), static_cast<double>(sram)}) {
    if (static_cast<double>(need_for(slice_for(grains_per_row))) > budget) continue;
    std::int64_t lo = 1, hi = grains_per_row;  // hi fits
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (static_cast<double>(need_for(slice_for(mid))) <= budget)
        hi = mid;
      else
        lo = mid + 1;
    }
    const std::int64_t slice = slice_for(hi);
    p.slice_bytes = slice;
    p.rounds = static_cast<std::int32_t>(ceil_div(row_bytes, slice));
    p.max_tile_bytes = need_for(slice);
    return p;
  }
  const std::int64_t slice = std::min(row_bytes, grain);
  std::int64_t worst = 0;
  sim::TileId worst_tile = 0;
  for (std::int32_t t = 0; t < num_tiles; ++t) {
    const std::int64_t b = tile_bytes(rows[static_cast<std::size_t>(t)], row_bytes, halo[static_cast<std::size_t>(t)], slice);
    if (b > worst) {
      worst = b;
      worst_tile = t;
    }
  }
  throw PlanError("the graph does not fit one " + machine.chip.name + ": tile " + std::to_string(worst_tile) + " needs " +
                  std::to_string(worst) + " bytes (" + std::to_string(rows[static_cast<std::size_t>(worst_tile)]) +
                  " rows of " + std::to_string(row_bytes) + " bytes and " + std::to_string(halo[static_cast<std::size_t>(worst_tile)]) +
                  " received rows, even exchanged " + std::to_string(slice) + " bytes per row at a time) and has " +
                  std::to_string(sram) + "; use more IPUs, fewer features or a smaller graph (batch)");
}

sim::Program build_message_exchange_program(const MessageExchangePlan& plan, const TileOfRow& tile_of_row,
                                            const IpuMachine& machine) {
  const std::int32_t num_tiles = machine.chip.num_tiles;
  sim::Program program;
  program.name = "message_exchange";
  std::vector<std::int64_t> rows(static_cast<std::size_t>(num_tiles), 0), halo(static_cast<std::size_t>(num_tiles), 0);
  std::vector<std::int64_t> local(tile_of_row.size());
  for (std::size_t r = 0; r < tile_of_row.size(); ++r) local[r] = rows[static_cast<std::size_t>(tile_of_row[r])]++;
  // Each (row, destination tile) gets the next slot of that tile's received-rows buffer, in row order.
  std::vector<std::int64_t> slot(plan.dst_tiles.size());
  for (std::size_t k = 0; k < plan.dst_tiles.size(); ++k) slot[k] = halo[static_cast<std::size_t>(plan.dst_tiles[k])]++;

  std::vector<sim::BufferId> row_buffer(static_cast<std::size_t>(num_tiles), -1), halo_buffer(static_cast<std::size_t>(num_tiles), -1);
  for (std::int32_t t = 0; t < num_tiles; ++t) {
    const auto k = static_cast<std::size_t>(t);
    if (rows[k] > 0) row_buffer[k] = program.add_buffer("rows", t, rows[k] * plan.row_bytes);
    if (halo[k] > 0) halo_buffer[k] = program.add_buffer("received_rows", t, halo[k] * plan.slice_bytes);
  }
  for (std::int32_t round = 0; round < plan.rounds; ++round) {
    const std::int64_t offset = round * plan.slice_bytes;
    const std::int64_t bytes = std::min(plan.slice_bytes, plan.row_bytes - offset);
    sim::Superstep step;
    step.name = "message_exchange_round_" + std::to_string(round);
    step.exchange.name = step.name;
    for (std::size_t r = 0; r < tile_of_row.size(); ++r) {
      const auto first = static_cast<std::size_t>(plan.dst_tiles_begin[r]), last = static_cast<std::size_t>(plan.dst_tiles_begin[r + 1]);
      if (first == last) continue;
      sim::Transfer transfer;
      transfer.src = {row_buffer[static_cast<std::size_t>(tile_of_row[r])], local[r] * plan.row_bytes + offset};
      transfer.bytes = bytes;
      for (std::size_t k = first; k < last; ++k) {
        transfer.dst.push_back({halo_buffer[static_cast<std::size_t>(plan.dst_tiles[k])], slot[k] * plan.slice_bytes});
      }
      step.exchange.transfers.push_back(std::move(transfer));
    }
    program.steps.push_back(std::move(step));
  }
  return program;
}

nlohmann::json PlacementResult::to_json() const {
  return {{"placement", name},
          {"kind", "simulated"},
          {"rows", plan.num_rows},
          {"row_bytes", plan.row_bytes},
          {"edges", plan.edges},
          {"cut_edges", plan.cut_edges},
          {"edge_cut_fraction", plan.cut_fraction()},
          {"row_transfers", plan.row_transfers},
          {"exchange_bytes", plan.exchange_bytes},
          {"max_bytes_received_per_tile", plan.max_bytes_received_per_tile},
          {"busiest_receiver_tile", plan.busiest_receiver},
          {"max_bytes_sent_per_tile", plan.max_bytes_sent_per_tile},
          {"max_rows_per_tile", plan.max_rows_per_tile},
          {"max_edges_per_tile", plan.max_edges_per_tile},
          {"rounds", plan.rounds},
          {"max_tile_bytes", plan.max_tile_bytes},
          {"exchange_cycles", stats.exchange_cycles},
          {"sync_cycles", stats.sync_cycles},
          {"total_cycles", stats.total_cycles},
          {"time_s", time_s}};
}

PlacementResult simulate_placement(const std::string& name, const std::vector<std::int32_t>& src,
                                   const std::vector<std::int32_t>& dst, const TileOfRow& tile_of_row,
                                   std::int64_t row_bytes, const IpuMachine& machine) {
  PlacementResult result;
  result.name = name;
  result.plan = plan_message_exchange(src, dst, tile_of_row, row_bytes, machine);
  const sim::Program program = build_message_exchange_program(result.plan, tile_of_row, machine);
  sim::Engine& engine = engine_for(machine);
  engine.load(program, machine.chip, sim::Mode::timing_only);
  result.stats = engine.run();
  result.time_s = machine.chip.seconds(result.stats.total_cycles);
  return result;
}

}  // namespace tilesim::ipu
