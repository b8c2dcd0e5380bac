#include "models/ipu/programs/linear_buffers.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace tilesim::ipu {

std::vector<sim::BufferId> add_linear_buffers(sim::Program& program, const std::string& name, const LinearLayout& layout,
                                              std::int64_t element_bytes, std::vector<TensorPiece>* pieces) {
  std::vector<sim::BufferId> buffers;
  const auto interned = program.buffer_name(name);
  for (std::int64_t t = 0; t < layout.tiles_used; ++t) {
    const Range r = layout.tile_range(t);
    const auto b = program.add_buffer(interned, static_cast<sim::TileId>(t), r.size() * element_bytes);
    buffers.push_back(b);
    if (pieces) pieces->push_back({b, r.begin, r.size(), 0, 1});
  }
  return buffers;
}

namespace {

// A column block's rows, walked in order where a row is longer than a linear tile's share: the rows
// wholly inside one tile as one strided transfer, a row across tiles cut at each boundary. `add(t,
// elements, regions)` takes each transfer with linear tile t.
template <class Add>
void sum_column_block_row_by_row(const TensorPiece& piece, std::int64_t width, std::int64_t per_tile, const FixedDivisor& rows_in,
                                 Add& add) {
  std::int64_t flat = piece.row_begin * width + piece.col_begin;  // the current row's first element
  std::int64_t tile = flat / per_tile;
  std::int64_t tile_end = (tile + 1) * per_tile;
  auto next_row = [&](std::int64_t rows) {
    flat += rows * width;
    if (flat < tile_end) return;
    if (flat < tile_end + per_tile) {
      ++tile;
      tile_end += per_tile;
    } else {
      tile = flat / per_tile;
      tile_end = (tile + 1) * per_tile;
    }
  };
  for (std::int64_t r = 0; r < piece.rows;) {
    if (flat + piece.cols > tile_end) {  // a row straddling tiles: one region in each
      std::int64_t at = flat, t = tile;
      for (const std::int64_t end = flat + piece.cols; at < end; ++t) {
        const std::int64_t k = std::min(end, (t + 1) * per_tile) - at;
        add(t, k, 1);
        at += k;
      }
      ++r;
      next_row(1);
      continue;
    }
    // The rows from r whose segments end inside this tile: one strided transfer of that many regions.
    const std::int64_t rows = std::min(piece.rows - r, rows_in(tile_end - flat - piece.cols) + 1);
    add(tile, rows * piece.cols, rows);
    r += rows;
    next_row(rows);
  }
}

// The same sums where each linear tile holds at least a row, tile by tile over the tiles the block
// spans: in each, its rows wholly inside the tile (one region each) and at most two rows cut by the
// tile's edges (a block's segment is narrower than a row, so no two cross one edge). Which rows those
// are is a quotient by the row width that moves by the tile's size from one tile to the next, carried
// forward (SteppedQuotient) rather than divided anew.
template <class Add>
void sum_column_block_tile_by_tile(const TensorPiece& piece, std::int64_t width, std::int64_t per_tile, Add& add) {
  const std::int64_t c0 = piece.col_begin, cols = piece.cols;
  const std::int64_t first_row = piece.row_begin, last_row = piece.row_begin + piece.rows - 1;
  const std::int64_t t_first = (first_row * width + c0) / per_tile;
  const std::int64_t t_last = (last_row * width + c0 + cols - 1) / per_tile;
  std::int64_t begin = t_first * per_tile;
  // For the tile [begin, end): the last row starting before `begin`, the last row ending by `end`, and
  // the last row starting before `end`.
  SteppedQuotient before_begin(begin - 1 - c0, per_tile, width);
  SteppedQuotient ends_by_end(begin + per_tile - c0 - cols, per_tile, width);
  SteppedQuotient before_end(begin + per_tile - 1 - c0, per_tile, width);
  for (std::int64_t t = t_first; t <= t_last; ++t) {
    const std::int64_t end = begin + per_tile;
    const std::int64_t from = std::max(first_row, before_begin.quotient + 1), to = std::min(last_row, ends_by_end.quotient);
    std::int64_t elements = 0, regions = 0;
    if (to >= from) {
      elements = (to - from + 1) * cols;
      regions = to - from + 1;
    }
    const std::int64_t r1 = before_begin.quotient, start1 = r1 * width + c0;
    if (r1 >= first_row && r1 <= last_row && start1 + cols > begin) {  // reaches past `begin`
      elements += std::min(start1 + cols, end) - begin;
      ++regions;
    }
    const std::int64_t r2 = before_end.quotient, start2 = r2 * width + c0;
    if (r2 >= first_row && r2 <= last_row && start2 >= begin && start2 + cols > end) {  // starts inside, reaches past `end`
      elements += end - start2;
      ++regions;
    }
    if (regions > 0) add(t, elements, regions);
    begin = end;
    before_begin.next();
    ends_by_end.next();
    before_end.next();
  }
}

// The rows of a column block (piece.cols < width) moved to or from the linear layout, summed per tile
// into exchange.tile_sums as walk_linear_transfers' transfers would be counted there, one at a time:
// the same regions and bytes, without a count per transfer. The hydronet grid's scatter_add points
// make about 46,000 such transfers each (55 million over the grid); walked with a division per tile
// boundary and a count per transfer they were a quarter of a timing-only point's host time. Here the
// linear tile advances as the rows do (or the tiles are walked, where a tile holds a row) and the
// block's own tile is summed once; sum_bands_per_tile below does better still for whole bands. A single-chip machine
// only (tile_sums_tiles_per_chip 0), the block's tile on it: across chips the pairs stay counted for
// the links.
void sum_column_block_per_tile(sim::ExchangePlan& exchange, const TensorPiece& piece, std::int64_t width,
                               const LinearLayout& layout, const std::vector<sim::BufferId>& linear,
                               std::int64_t element_bytes, bool to_linear, const sim::Program& counting) {
  const sim::TileId piece_tile = counting.tile_of(piece.buffer);
  const std::size_t num_tiles = exchange.tile_sums.size() / 4;
  std::int64_t* sums = exchange.tile_sums.data();
  const std::int64_t per_tile = layout.elements_per_tile;
  std::int64_t piece_bytes = 0, piece_regions = 0;  // what the block's tile sends (or receives)
  // `elements` of the block in `regions` regions between its tile and linear tile t.
  auto add = [&](std::int64_t t, std::int64_t elements, std::int64_t regions) {
    const sim::TileId linear_tile = counting.tile_of(linear[static_cast<std::size_t>(t)]);
    if (static_cast<std::size_t>(linear_tile) >= num_tiles) {  // off the machine: counted, for the engine to refuse
      exchange.count(to_linear ? piece_tile : linear_tile, to_linear ? linear_tile : piece_tile, elements * element_bytes, regions);
      return;
    }
    const std::size_t at = 4 * static_cast<std::size_t>(linear_tile) + (to_linear ? 2 : 0);
    sums[at] += elements * element_bytes;
    sums[at + 1] += regions;
    piece_bytes += elements * element_bytes;
    piece_regions += regions;
  };
  if (per_tile >= width) {
    sum_column_block_tile_by_tile(piece, width, per_tile, add);
  } else {
    sum_column_block_row_by_row(piece, width, per_tile, FixedDivisor(width), add);
  }
  const std::size_t at = 4 * static_cast<std::size_t>(piece_tile) + (to_linear ? 0 : 2);
  sums[at] += piece_bytes;
  sums[at + 1] += piece_regions;
  if (piece_regions > 0) exchange.tile_sums_used = true;
}

// The pieces as bands, each a run of rows whose pieces' column blocks cover the tensor's width exactly
// once, summed per tile for all the band's pieces at once: the segments of a band's rows, block by
// block, tile its flat range end to end, so a linear tile's share is the band's elements inside it,
// in as many regions as segments meet it, and a piece's regions are its rows plus the tile boundaries
// that fall inside one of its segments (a band of one piece, whole rows, is one contiguous run: a
// region per tile it meets). That is O(tiles the band spans + its pieces) where summing
// piece by piece is O(pieces x tiles): a scatter's output, H column blocks of every row block, was a
// fifth of a timing-only hydronet point's host time summed piece by piece. Returns false, summing
// nothing, when the pieces are not such bands or a tile is off the machine (the caller then sums piece
// by piece); the sums are the ones counting each transfer gives (tests/models/ipu/timing_only_sequence_test).
bool sum_bands_per_tile(sim::ExchangePlan& exchange, const std::vector<TensorPiece>& from, std::int64_t width,
                        const LinearLayout& layout, const std::vector<sim::BufferId>& linear, std::int64_t element_bytes,
                        bool to_linear, const sim::Program& counting) {
  const std::size_t num_tiles = exchange.tile_sums.size() / 4;
  for (const auto b : linear)
    if (static_cast<std::size_t>(counting.tile_of(b)) >= num_tiles) return false;
  std::vector<std::size_t> order(from.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (static_cast<std::size_t>(counting.tile_of(from[k].buffer)) >= num_tiles || from[k].rows <= 0 || from[k].cols <= 0) return false;
    order[k] = k;
  }
  const auto before = [&](std::size_t a, std::size_t b) {
    const TensorPiece &x = from[a], &y = from[b];
    return std::tie(x.row_begin, x.rows, x.col_begin) < std::tie(y.row_begin, y.rows, y.col_begin);
  };
  // Builders mostly list their pieces row block by row block, column block by column block: already in order.
  if (!std::is_sorted(order.begin(), order.end(), before)) std::sort(order.begin(), order.end(), before);
  // Bands: [first, last) of `order`, each checked to cover the width exactly once.
  std::vector<std::pair<std::size_t, std::size_t>> bands;
  for (std::size_t first = 0; first < order.size();) {
    const TensorPiece& head = from[order[first]];
    std::int64_t covered = 0;
    std::size_t last = first;
    for (; last < order.size() && from[order[last]].row_begin == head.row_begin && from[order[last]].rows == head.rows; ++last) {
      if (from[order[last]].col_begin != covered) return false;
      covered += from[order[last]].cols;
    }
    if (covered != width) return false;
    bands.emplace_back(first, last);
    first = last;
  }
  std::int64_t* sums = exchange.tile_sums.data();
  const std::size_t linear_side = to_linear ? 2 : 0, piece_side = to_linear ? 0 : 2;
  const std::int64_t per_tile = layout.elements_per_tile;
  const FixedDivisor rows_of(width);
  std::vector<std::int64_t> block_begins, crossings;
  for (const auto& [first, last] : bands) {
    block_begins.clear();
    for (std::size_t k = first; k < last; ++k) block_begins.push_back(from[order[k]].col_begin);
    const std::int64_t blocks = static_cast<std::int64_t>(block_begins.size());
    const std::int64_t band_rows = from[order[first]].rows;
    const std::int64_t band_begin = from[order[first]].row_begin * width, band_end = band_begin + band_rows * width;
    // The block of column `col`, and the index of the segment holding flat element x of the band.
    auto block_of = [&](std::int64_t col) {
      return static_cast<std::int64_t>(std::upper_bound(block_begins.begin(), block_begins.end(), col) - block_begins.begin()) - 1;
    };
    auto segment_of = [&](std::int64_t x) {
      const std::int64_t row = rows_of(x - band_begin);
      return row * blocks + block_of(x - band_begin - row * width);
    };
    crossings.assign(static_cast<std::size_t>(blocks), 0);
    const std::int64_t t_first = band_begin / per_tile, t_last = (band_end - 1) / per_tile;
    for (std::int64_t t = t_first; t <= t_last; ++t) {
      const std::int64_t lo = std::max(t * per_tile, band_begin), hi = std::min((t + 1) * per_tile, band_end);
      const std::size_t at = 4 * static_cast<std::size_t>(counting.tile_of(linear[static_cast<std::size_t>(t)])) + linear_side;
      sums[at] += (hi - lo) * element_bytes;
      // A piece of whole rows moves as one contiguous run: one region in each tile it meets.
      sums[at + 1] += blocks == 1 ? 1 : segment_of(hi - 1) - segment_of(lo) + 1;
      if (t > t_first) {  // the boundary at lo cuts a segment unless a block starts there
        const std::int64_t offset = lo - band_begin, col = offset - rows_of(offset) * width;
        const std::int64_t j = block_of(col);
        if (block_begins[static_cast<std::size_t>(j)] != col) ++crossings[static_cast<std::size_t>(j)];
      }
    }
    for (std::size_t k = first; k < last; ++k) {
      const TensorPiece& piece = from[order[k]];
      const std::size_t at = 4 * static_cast<std::size_t>(counting.tile_of(piece.buffer)) + piece_side;
      sums[at] += piece.rows * piece.cols * element_bytes;
      sums[at + 1] += blocks == 1 ? t_last - t_first + 1 : piece.rows + crossings[k - first];
    }
  }
  if (!bands.empty()) exchange.tile_sums_used = true;
  return true;
}

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
  // (Summed per tile, nothing is listed: the bound is only worked out for a list.)
  auto reserve = [&](auto& list) {
    std::size_t bound = list.size();
    for (const auto& piece : from) {
      const std::int64_t spanned = piece.rows * width / layout.elements_per_tile + 2;
      bound += static_cast<std::size_t>(piece.cols == width ? spanned : std::min(piece.rows, spanned) + spanned);
    }
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
  const bool sum_per_tile = counting && broadcast_set < 0 && !exchange.tile_sums.empty() && exchange.tile_sums_tiles_per_chip == 0;
  if (sum_per_tile && sum_bands_per_tile(exchange, from, width, layout, linear, element_bytes, to_linear, *counting)) return;
  for (const auto& piece : from) {
    if (counting) piece_tile = counting->tile_of(piece.buffer);
    if (sum_per_tile && piece.cols != width && static_cast<std::size_t>(piece_tile) < exchange.tile_sums.size() / 4) {
      sum_column_block_per_tile(exchange, piece, width, layout, linear, element_bytes, to_linear, *counting);
      continue;
    }
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
      std::vector<sim::TileId> tiles;
      tiles.reserve(copies.size() + 1);
      tiles.push_back(program.tile_of(first.buffer));
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
