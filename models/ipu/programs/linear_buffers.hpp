#pragma once
// The programs' side of the linear layout (planning/linear_layout.hpp): one buffer per tile the layout
// uses, and the transfers that move rectangles of a tensor between the linear layout and a plan's
// blocks, which is what every op pays to start from, or end in, the layout contract of op_program.hpp.
#include <cstdint>
#include <string>
#include <vector>

#include "models/ipu/planning/linear_layout.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "sim/program.hpp"

namespace tilesim::ipu {

// Declares one buffer per used tile of `layout`; returns them (index = tile) and appends their flat
// pieces (TensorPiece rows = elements, cols = 1) to `pieces`.
std::vector<sim::BufferId> add_linear_buffers(sim::Program& program, const std::string& name, const LinearLayout& layout,
                                              std::int64_t element_bytes, std::vector<TensorPiece>* pieces);

// Transfers that move every element of the rectangular `from` pieces (of a row-major tensor `width`
// wide) to its place in the linear buffers `to`; or the reverse when `to_linear` is false. `program`
// holds the buffers: a timing-only one (sim::Program::timing_only) gets the transfers counted rather
// than listed, since a large op moves hundreds of thousands of row segments this way.
void add_linear_transfers(const sim::Program& program, sim::ExchangePlan& exchange, const std::vector<TensorPiece>& from,
                          std::int64_t width, const LinearLayout& layout, const std::vector<sim::BufferId>& linear,
                          std::int64_t element_bytes, bool to_linear);

// Transfers that move one rectangle of a linearly mapped tensor (`width` wide) into the buffer of
// `first` and, at the same offsets, into each of `copies`: one broadcast per run of the rectangle
// that lies on one linear tile. A timing-only `program` gets them counted (sim::BroadcastCount).
void broadcast_from_linear(const sim::Program& program, sim::ExchangePlan& exchange, const TensorPiece& first,
                           const std::vector<sim::BufferId>& copies, std::int64_t width, const LinearLayout& layout,
                           const std::vector<sim::BufferId>& linear, std::int64_t element_bytes);

}  // namespace tilesim::ipu
