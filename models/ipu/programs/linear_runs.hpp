#pragma once
// What the static-index programs (static_index_program.hpp) share: rows of tensors in the linear
// layout cut into runs that lie on one tile of each of two layouts, each worker's share of a vertex's
// items, and a program whose one input and output are in the linear layout.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/op_graph.hpp"
#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/planning/linear_layout.hpp"
#include "models/ipu/programs/op_program.hpp"

namespace tilesim::ipu {

// A run of one row's columns that lies on one tile of each of two linear layouts: columns
// [col, col + count) of source row `src_row` (layout `from`) and of destination row `dst_row` (layout `to`).
struct RowRun {
  std::int64_t col = 0, count = 0;
  std::int64_t src_tile = 0, src_element = 0;  // element offset within the source tile's buffer
  std::int64_t dst_tile = 0, dst_element = 0;
};

// Cuts columns [col_begin, col_end) of a row at the tile boundaries of both layouts.
template <class Fn>
void for_each_run(const LinearLayout& from, std::int64_t src_row, const LinearLayout& to, std::int64_t dst_row,
                  std::int64_t width, std::int64_t col_begin, std::int64_t col_end, Fn&& fn) {
  std::int64_t c = col_begin;
  while (c < col_end) {
    const std::int64_t sf = src_row * width + c, df = dst_row * width + c;
    const std::int64_t ts = sf / from.elements_per_tile, td = df / to.elements_per_tile;
    const Range rs = from.tile_range(ts), rd = to.tile_range(td);
    const std::int64_t n = std::min({col_end - c, rs.end - sf, rd.end - df});
    fn(RowRun{c, n, ts, sf - rs.begin, td, df - rd.begin});
    c += n;
  }
}

// Each worker's share of `items` in contiguous blocks (0 for an idle worker).
inline std::vector<std::int64_t> worker_shares(std::int64_t items, std::int64_t workers) {
  const auto shares = worker_split_cycles(items, workers, [](std::int64_t n) { return n; });
  return {shares.begin(), shares.end()};
}

// A program whose one input and output are value tensors (`value_bytes` per element) in the linear
// layout (flat pieces).
struct LinearProgram {
  OpProgram op;
  std::vector<sim::BufferId> input, output;  // by tile
};
LinearProgram linear_program(const Op& op, const std::string& input_name, const LinearLayout& input,
                             const LinearLayout& output, std::int64_t value_bytes);

}  // namespace tilesim::ipu
