#pragma once
// Host writes and reads of an op's tensor pieces on the engine (functional mode): how the inputs get
// onto the tiles and the outputs back. Whole-row (or flat) pieces move in one call.
#include <cstdint>
#include <vector>

#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "sim/engine.hpp"

namespace tilesim::ipu {

// Host writes and reads of tensor pieces. Whole-row pieces move in one call.
template <class T>
inline void write_pieces(sim::Engine& engine, const std::vector<TensorPiece>& pieces, const std::vector<T>& data, std::int64_t width) {
  for (const auto& p : pieces) {
    if (p.cols == width) {
      engine.write(p.buffer, 0, data.data() + p.row_begin * width, p.rows * width * static_cast<std::int64_t>(sizeof(T)));
      continue;
    }
    for (std::int64_t r = 0; r < p.rows; ++r) {
      engine.write(p.buffer, r * p.cols * static_cast<std::int64_t>(sizeof(T)),
                   data.data() + (p.row_begin + r) * width + p.col_begin, p.cols * static_cast<std::int64_t>(sizeof(T)));
    }
  }
}

inline void read_pieces(const sim::Engine& engine, const std::vector<TensorPiece>& pieces, std::vector<float>& data, std::int64_t width) {
  for (const auto& p : pieces) {
    if (p.cols == width) {
      engine.read(p.buffer, 0, data.data() + p.row_begin * width, p.rows * width * kValueBytes);
      continue;
    }
    for (std::int64_t r = 0; r < p.rows; ++r) {
      engine.read(p.buffer, r * p.cols * kValueBytes, data.data() + (p.row_begin + r) * width + p.col_begin, p.cols * kValueBytes);
    }
  }
}


}  // namespace tilesim::ipu
