#include "models/ipu/linear_layout.hpp"

#include <algorithm>

namespace tilesim::ipu {

LinearLayout linear_layout(std::int64_t elements, std::int64_t element_bytes, const IpuMachine& machine) {
  LinearLayout l;
  l.elements = elements;
  const std::int64_t grain = std::max<std::int64_t>(1, machine.planner.column_grain_bytes / element_bytes);
  const std::int64_t min_elements = std::max<std::int64_t>(1, machine.planner.linear_min_bytes_per_tile / element_bytes);
  const std::int64_t even_share = ceil_div(ceil_div(elements, machine.chip.num_tiles), grain) * grain;
  l.elements_per_tile = std::max(even_share, ceil_div(min_elements, grain) * grain);
  l.tiles_used = ceil_div(elements, l.elements_per_tile);
  return l;
}

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

void add_linear_transfers(sim::ExchangePlan& exchange, const std::vector<TensorPiece>& from, std::int64_t width,
                          const LinearLayout& layout, const std::vector<sim::BufferId>& linear, std::int64_t element_bytes,
                          bool to_linear) {
  for (const auto& piece : from) {
    // Whole-width pieces are one contiguous flat run; others are one run per row.
    const bool contiguous = piece.cols == width;
    const std::int64_t runs = contiguous ? 1 : piece.rows;
    const std::int64_t run_elements = contiguous ? piece.rows * width : piece.cols;
    for (std::int64_t k = 0; k < runs; ++k) {
      const std::int64_t flat_begin = (piece.row_begin + k) * width + piece.col_begin;
      const std::int64_t piece_offset = k * piece.cols;  // elements into the piece's buffer
      // Split the run at linear tile boundaries.
      std::int64_t e = flat_begin;
      const std::int64_t end = flat_begin + run_elements;
      while (e < end) {
        const std::int64_t t = e / layout.elements_per_tile;
        const Range r = layout.tile_range(t);
        const std::int64_t n = std::min(end, r.end) - e;
        const sim::BufferRef piece_ref{piece.buffer, (piece_offset + (e - flat_begin)) * element_bytes};
        const sim::BufferRef linear_ref{linear[static_cast<std::size_t>(t)], (e - r.begin) * element_bytes};
        if (to_linear) {
          exchange.transfers.push_back({piece_ref, n * element_bytes, {linear_ref}});
        } else {
          exchange.transfers.push_back({linear_ref, n * element_bytes, {piece_ref}});
        }
        e += n;
      }
    }
  }
}

}  // namespace tilesim::ipu
