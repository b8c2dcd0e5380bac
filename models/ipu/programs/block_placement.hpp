#pragma once
// Placing the blocks a gather or a scatter reads on the tiles of its split, the one way both do it: a
// block of a row-major tensor (a gather's table block (s, h), a scatter's message block (i, h)) is held
// on one tile and copied to the other tiles that read it (the gather's other index groups, the
// scatter's other row blocks). The tensor starts either resident in the plan's layout (a graph input
// allocated for its consumer: the held block is an input piece, broadcast once to the copies) or in the
// linear layout (an earlier op's output: each linear run of the block is broadcast to the holder and
// the copies alike).
#include <cstdint>
#include <string>
#include <vector>

#include "models/ipu/planning/blocks.hpp"
#include "models/ipu/planning/linear_layout.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "sim/program.hpp"

namespace tilesim::ipu {

// Where a placed tensor starts: `width` columns of `value_bytes` each, in the linear layout `linear`
// (buffers `linear_buffers`, by tile) or, when `linear` is null, resident in the plan's layout.
struct BlockSource {
  std::int64_t width = 0;
  std::int64_t value_bytes = 0;
  const LinearLayout* linear = nullptr;
  const std::vector<sim::BufferId>* linear_buffers = nullptr;
};

// Declares the block (`rows` x `cols` of the tensor) as `name` on tile `holder` and as "`name` copy" on
// each of `copy_tiles`, records each tile's buffer in `buffer_of` (by tile), and adds the transfers that
// bring it there to `exchange` (and, for a resident tensor, the held block to `input`). A resident
// block's broadcast carries read-only copies (sim::Transfer::read_only_copies): its readers only read.
void place_block(sim::Program& program, sim::ExchangePlan& exchange, std::vector<TensorPiece>& input, const std::string& name,
                 Range rows, Range cols, sim::TileId holder, const std::vector<sim::TileId>& copy_tiles,
                 const BlockSource& source, std::vector<sim::BufferId>& buffer_of);

}  // namespace tilesim::ipu
