#pragma once
// Host writes and reads of an op's tensor pieces on the engine (functional mode): how the inputs get
// onto the tiles and the outputs back. Whole-row (or flat) pieces move in one call.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "sim/engine.hpp"

namespace tilesim::ipu {

// Moves every element of `pieces` between host data (row-major, `width` wide) and the pieces' buffers,
// in the direction `Move` gives: Move::view(piece) checks a piece's buffer once and returns its bytes,
// and move(host, bytes, n) copies n bytes one way or the other. Consecutive pieces over the same rows
// (a gather's column blocks of one index group) form a band whose host rows are visited once each, in
// order: copied column block by column block instead, rows `width` elements apart would map to few
// cache sets and evict each other between blocks.
template <class T, class Move>
void move_pieces(const std::vector<TensorPiece>& pieces, T* host, std::int64_t width, const Move& move) {
  constexpr auto element_bytes = static_cast<std::int64_t>(sizeof(T));
  std::vector<decltype(move.view(pieces.front()))> views;
  std::size_t band_begin = 0;
  while (band_begin < pieces.size()) {
    const TensorPiece& first = pieces[band_begin];
    std::size_t band_end = band_begin + 1;
    while (band_end < pieces.size() && pieces[band_end].row_begin == first.row_begin && pieces[band_end].rows == first.rows) {
      ++band_end;
    }
    views.clear();
    for (std::size_t k = band_begin; k < band_end; ++k) views.push_back(move.view(pieces[k]));
    if (band_end == band_begin + 1 && first.cols == width) {  // whole rows (or a flat piece): one run
      move(host + first.row_begin * width, views.front(), first.rows * width * element_bytes);
    } else {
      for (std::int64_t r = 0; r < first.rows; ++r) {
        T* host_row = host + (first.row_begin + r) * width;
        for (std::size_t k = band_begin; k < band_end; ++k) {
          const TensorPiece& p = pieces[k];
          move(host_row + p.col_begin, views[k - band_begin] + r * p.cols * element_bytes, p.cols * element_bytes);
        }
      }
    }
    band_begin = band_end;
  }
}

// Host writes and reads of tensor pieces.
template <class T>
inline void write_pieces(sim::Engine& engine, const std::vector<TensorPiece>& pieces, const std::vector<T>& data, std::int64_t width) {
  struct Write {
    sim::Engine& engine;
    std::byte* view(const TensorPiece& p) const {
      return engine.host_view_for_write(p.buffer, 0, p.rows * p.cols * static_cast<std::int64_t>(sizeof(T)));
    }
    void operator()(const T* host, std::byte* buffer, std::int64_t bytes) const {
      if (bytes > 0) std::memcpy(buffer, host, static_cast<std::size_t>(bytes));
    }
  };
  move_pieces(pieces, data.data(), width, Write{engine});
}

inline void read_pieces(const sim::Engine& engine, const std::vector<TensorPiece>& pieces, std::vector<float>& data, std::int64_t width) {
  struct Read {
    const sim::Engine& engine;
    const std::byte* view(const TensorPiece& p) const { return engine.host_view(p.buffer, 0, p.rows * p.cols * kValueBytes); }
    void operator()(float* host, const std::byte* buffer, std::int64_t bytes) const {
      if (bytes > 0) std::memcpy(host, buffer, static_cast<std::size_t>(bytes));
    }
  };
  move_pieces(pieces, data.data(), width, Read{engine});
}

}  // namespace tilesim::ipu
