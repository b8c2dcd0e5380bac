#include "models/ipu/programs/linear_buffers.hpp"

#include <algorithm>

namespace tilesim::ipu {

std::vector<sim::BufferId> add_linear_buffers(sim::Program& program, const std::string& name, const LinearLayout& layout,
                                              std::int64_t element_bytes, std::vector<TensorPiece>* pieces) {
  std::vector<sim::BufferId> buffers;
  for (std::int64_t t = 0; t < layout.tiles_used; ++t) {
    const Range r = layout.tile_range(t);
    const auto b = program.add_buffer(name, static_cast<sim::TileId>(t), r.size() * element_bytes);
    buffers.push_back(b);
    if (pieces) pieces->push_back({b, r.begin, r.size(), 0, 1});
  }
  return buffers;
}

namespace {

// add_linear_transfers, listing the transfers, or counting them (ExchangePlan::count) when `counting`
// is the timing-only program that holds the buffers; counted as broadcasts from the linear tiles to the
// plan's destination set `broadcast_set` when that is not negative.
void walk_linear_transfers(sim::ExchangePlan& exchange, const std::vector<TensorPiece>& from, std::int64_t width,
                           const LinearLayout& layout, const std::vector<sim::BufferId>& linear,
                           std::int64_t element_bytes, bool to_linear, const sim::Program* counting,
                           std::int64_t broadcast_set = -1) {
  sim::TileId piece_tile = 0;  // counting: the tile of the piece being walked
  // One transfer: `blocks` runs of `n` elements, from the piece at element `piece_at` (stride: the
  // piece's width) to linear tile t at element `linear_at` (stride: the tensor's width).
  auto emit = [&](const TensorPiece& piece, std::int64_t piece_at, std::int64_t t, std::int64_t linear_at, std::int64_t n,
                  std::int64_t blocks) {
    if (counting) {
      const sim::TileId linear_tile = counting->tile_of(linear[static_cast<std::size_t>(t)]);
      if (broadcast_set >= 0) {
        exchange.count_broadcast(linear_tile, static_cast<std::uint32_t>(broadcast_set), n * element_bytes * blocks, blocks);
        return;
      }
      exchange.count(to_linear ? piece_tile : linear_tile, to_linear ? linear_tile : piece_tile, n * element_bytes * blocks,
                     blocks);
      return;
    }
    const sim::BufferRef piece_ref{piece.buffer, piece_at * element_bytes};
    const sim::BufferRef linear_ref{linear[static_cast<std::size_t>(t)], linear_at * element_bytes};
    const std::int64_t piece_stride = blocks > 1 ? piece.cols * element_bytes : 0;
    const std::int64_t linear_stride = blocks > 1 ? width * element_bytes : 0;
    if (to_linear) {
      exchange.add(piece_ref, n * element_bytes, linear_ref, blocks, piece_stride, linear_stride);
    } else {
      exchange.add(linear_ref, n * element_bytes, piece_ref, blocks, linear_stride, piece_stride);
    }
  };
  // A contiguous run of flat elements [flat, flat + n) at element `piece_at` of the piece, cut at
  // linear tile boundaries.
  auto emit_run = [&](const TensorPiece& piece, std::int64_t piece_at, std::int64_t flat, std::int64_t n) {
    const std::int64_t end = flat + n;
    while (flat < end) {
      const std::int64_t t = flat / layout.elements_per_tile;
      const Range r = layout.tile_range(t);
      const std::int64_t k = std::min(end, r.end) - flat;
      emit(piece, piece_at, t, flat - r.begin, k, 1);
      piece_at += k;
      flat += k;
    }
  };
  // A large op lists hundreds of thousands of these; growing the list as it goes moves every transfer
  // listed so far at each regrowth. With ExchangePlan::add, reserving once took 7-10% off a 2048 x 512
  // scatter_add point's host time and 7% off the instructions of 54 points of the hydronet grid. The
  // bound comes from the pieces' shapes: a piece spanning s linear tiles makes at most s + 1 transfers
  // of whole rows, or, as a column block, at most one per row (min(rows, s + 1) groups) plus one per
  // tile boundary a row straddles (s + 1). Reserved at least geometrically: a builder calls this once
  // per block (a broadcast from the linear layout), and reserving the bound each time would move every
  // transfer listed so far at every call.
  std::size_t bound = !counting ? exchange.transfers.size()
                      : broadcast_set >= 0 ? exchange.broadcasts_counted.size() : exchange.counted.size();
  for (const auto& piece : from) {
    const std::int64_t spanned = piece.rows * width / layout.elements_per_tile + 2;
    bound += static_cast<std::size_t>(piece.cols == width ? spanned : std::min(piece.rows, spanned) + spanned);
  }
  auto reserve = [bound](auto& list) {
    if (bound > list.capacity()) list.reserve(std::max(bound, 2 * list.capacity()));
  };
  if (!counting) {
    reserve(exchange.transfers);
  } else if (broadcast_set >= 0) {
    reserve(exchange.broadcasts_counted);
  } else if (counting->tile_sums_num_tiles > 0) {
    // Every pair of a block's tile and a linear tile: summed per tile, not listed (ExchangePlan::tile_sums).
    exchange.enable_tile_sums(counting->tile_sums_num_tiles, counting->tile_sums_tiles_per_chip);
  } else {
    reserve(exchange.counted);
  }
  for (const auto& piece : from) {
    if (counting) piece_tile = counting->tile_of(piece.buffer);
    if (piece.cols == width) {  // whole rows: one contiguous flat run
      emit_run(piece, 0, piece.row_begin * width, piece.rows * width);
      continue;
    }
    // A column block: consecutive rows whose segments fall in the same linear tile share one strided
    // transfer; a row straddling a tile boundary is cut like a contiguous run. A group's extent is
    // computed, not found row by row: a large block spans thousands of rows but few tiles.
    std::int64_t r = 0;
    while (r < piece.rows) {
      const std::int64_t flat = (piece.row_begin + r) * width + piece.col_begin;
      const std::int64_t tile = flat / layout.elements_per_tile;
      const std::int64_t tile_end = (tile + 1) * layout.elements_per_tile;
      if (flat + piece.cols > tile_end) {  // straddles
        emit_run(piece, r * piece.cols, flat, piece.cols);
        ++r;
        continue;
      }
      // The last row whose segment still ends inside this tile (its start is in it too).
      const std::int64_t last = std::min(piece.rows - 1, (tile_end - piece.col_begin - piece.cols) / width - piece.row_begin);
      emit(piece, r * piece.cols, tile, flat - layout.tile_range(tile).begin, piece.cols, last - r + 1);
      r = last + 1;
    }
  }
}

}  // namespace

void add_linear_transfers(const sim::Program& program, sim::ExchangePlan& exchange, const std::vector<TensorPiece>& from,
                          std::int64_t width, const LinearLayout& layout, const std::vector<sim::BufferId>& linear,
                          std::int64_t element_bytes, bool to_linear) {
  walk_linear_transfers(exchange, from, width, layout, linear, element_bytes, to_linear,
                        program.timing_only ? &program : nullptr);
}

void broadcast_from_linear(const sim::Program& program, sim::ExchangePlan& exchange, const TensorPiece& first,
                           const std::vector<sim::BufferId>& copies, std::int64_t width, const LinearLayout& layout,
                           const std::vector<sim::BufferId>& linear, std::int64_t element_bytes) {
  if (program.timing_only) {
    std::int64_t set = -1;
    if (!copies.empty()) {
      std::vector<sim::TileId> tiles{program.tile_of(first.buffer)};
      for (const auto c : copies) tiles.push_back(program.tile_of(c));
      set = exchange.add_destination_set(std::move(tiles));
    }
    walk_linear_transfers(exchange, {first}, width, layout, linear, element_bytes, /*to_linear=*/false, &program, set);
    return;
  }
  const std::size_t begin = exchange.transfers.size();
  walk_linear_transfers(exchange, {first}, width, layout, linear, element_bytes, /*to_linear=*/false, nullptr);
  for (std::size_t k = begin; k < exchange.transfers.size(); ++k) {
    auto& t = exchange.transfers[k];
    const std::int64_t offset = t.dst.front().offset_bytes;
    for (const auto c : copies) t.dst.push_back({c, offset});
  }
}

}  // namespace tilesim::ipu
