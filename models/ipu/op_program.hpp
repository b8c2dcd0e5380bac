#pragma once
// Turning a plan into an engine Program: the buffers on each tile, the vertices with their exact
// per-worker costs (computed from the actual indices, as the hardware's work depends on them), and
// the compiled exchanges. Also where each piece of the op's tensors lives, for host writes and reads.
#include <cstdint>
#include <vector>

#include "ir/op_graph.hpp"
#include "models/ipu/machine_file.hpp"
#include "models/ipu/plan.hpp"
#include "sim/program.hpp"

namespace tilesim::ipu {

// A rectangle of a row-major 2-D tensor held contiguously (row-major, `cols` wide) in one buffer.
// A 1-D tensor is a tensor of width 1.
struct TensorPiece {
  sim::BufferId buffer = -1;
  std::int64_t row_begin = 0, rows = 0;
  std::int64_t col_begin = 0, cols = 0;
};

struct OpProgram {
  sim::Program program;
  std::vector<TensorPiece> input;    // table (gather) or messages (scatter_add)
  std::int64_t input_width = 0;      // width the input pieces index: num_features, or 1 when flat (linear layout)
  std::vector<TensorPiece> indices;
  std::vector<TensorPiece> output;   // every output element in exactly one piece
  std::int64_t output_width = 0;     // width the output pieces index: num_features, or 1 when flat (linear layout)
  std::int64_t sram_read_bytes = 0;  // bytes the vertices read from tile memory
  std::int64_t sram_write_bytes = 0; // bytes the vertices write to tile memory
};

OpProgram build_gather_program(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& indices,
                               const IpuMachine& machine);
OpProgram build_scatter_add_program(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& indices,
                                    const IpuMachine& machine);
// Tiles of a split, numbered tile(i, s, h) = (i * S + s) * H + h (see plan.hpp).
struct TileGrid {
  std::int64_t row_blocks = 1, column_blocks = 1;
  sim::TileId operator()(std::int64_t i, std::int64_t s, std::int64_t h) const {
    return static_cast<sim::TileId>((i * row_blocks + s) * column_blocks + h);
  }
};

// The indices of index group i (positions `range` of the op's indices): held on tile (i, 0, 0) and
// broadcast by `exchange` to the group's other tiles. Records each tile's index buffer in `buffer_of`
// (by tile) and the held piece in `pieces`.
void add_group_indices(sim::Program& program, sim::ExchangePlan& exchange, const TileGrid& grid, std::int64_t i,
                       std::int64_t range_begin, std::int64_t count, std::vector<sim::BufferId>& buffer_of,
                       std::vector<TensorPiece>& pieces);

// Appends the control step of the on-device repeat loop an op runs in (one vertex on tile 0 costing
// repeat_loop_control_cycles, then its sync), when the machine file gives it a cost.
void append_loop_control(sim::Program& program, const IpuMachine& machine);

OpProgram build_op_program(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& indices,
                           const IpuMachine& machine);

}  // namespace tilesim::ipu
