#pragma once
// Host writes and reads of an op's tensor pieces on the engine (functional mode): how the inputs get
// onto the tiles and the outputs back. Each piece is a rectangle of host rows (sim::HostRows); the
// engine moves them all in one call, column blocks over the same rows together.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/ipu/programs/op_program.hpp"
#include "sim/engine.hpp"

namespace tilesim::ipu {

// Where each piece's elements lie in host data that is row-major, `width` elements of `element_bytes` wide.
inline std::vector<sim::HostRows> host_rows(const std::vector<TensorPiece>& pieces, std::int64_t width,
                                            std::int64_t element_bytes) {
  std::vector<sim::HostRows> rows;
  rows.reserve(pieces.size());
  for (const TensorPiece& p : pieces) {
    rows.push_back({p.buffer, p.rows, p.cols * element_bytes, (p.row_begin * width + p.col_begin) * element_bytes,
                    width * element_bytes});
  }
  return rows;
}

// Host writes and reads of tensor pieces.
template <class T>
void write_pieces(sim::Engine& engine, const std::vector<TensorPiece>& pieces, const std::vector<T>& data, std::int64_t width) {
  constexpr auto element_bytes = static_cast<std::int64_t>(sizeof(T));
  engine.write_rows(host_rows(pieces, width, element_bytes), data.data(), static_cast<std::int64_t>(data.size()) * element_bytes);
}

template <class T>
void read_pieces(const sim::Engine& engine, const std::vector<TensorPiece>& pieces, std::vector<T>& data, std::int64_t width) {
  constexpr auto element_bytes = static_cast<std::int64_t>(sizeof(T));
  engine.read_rows(host_rows(pieces, width, element_bytes), data.data(), static_cast<std::int64_t>(data.size()) * element_bytes);
}

}  // namespace tilesim::ipu
