#pragma once
// Turning a plan into an engine Program: the buffers on each tile, the vertices with their exact
// per-worker costs (computed from the actual indices, as the hardware's work depends on them), and
// the compiled exchanges. Also where each piece of the op's tensors lives, for host writes and reads.
//
// The layout contract between ops: every tensor an op writes ends in the linear layout
// (planning/linear_layout.hpp: flat elements in equal contiguous ranges over the tiles), and an op reading it
// starts from there, paying the exchange into its plan's layout. The dense ops (matmul,
// segment_matmul, unary, binary and the training kinds) read every value operand from the linear
// layout; the gather's table and the scatters' messages, when they are graph inputs, start in the
// plan's layout (PopART allocates a graph input for its consumer, the hydronet benchmarks' setting),
// as does an optimizer's state (kept beside its parameter, as PopTorch maps it), and indices (labels
// too) are always graph inputs written where the plan wants them.
#include <cstdint>
#include <vector>

#include "ir/op_graph.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/planning/plan.hpp"
#include "sim/mode.hpp"
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
  std::vector<TensorPiece> input;    // table (gather), messages (scatter_*), left operand (dense ops); none for degree_count
  std::int64_t input_width = 0;      // width the input pieces index: num_features, or 1 when flat (linear layout)
  std::vector<TensorPiece> indices;  // none for a segment_matmul: its offsets shape the program itself
  std::vector<TensorPiece> weight;   // matmul/segment_matmul weight, binary's `other`: flat (linear layout)
  std::vector<TensorPiece> bias;     // matmul bias: flat (linear layout); optimizer_step's state [S, P]
  std::int64_t bias_width = 1;       // width the bias pieces index: 1 (flat), or P for the optimizer state
  std::vector<TensorPiece> aux;      // optimizer_step (adam): the step number, flat
  std::vector<TensorPiece> output;   // every output element in exactly one piece
  std::int64_t output_width = 0;     // width the output pieces index: num_features, or 1 when flat (linear layout)
  std::int64_t sram_read_bytes = 0;  // bytes the vertices read from tile memory
  std::int64_t sram_write_bytes = 0; // bytes the vertices write to tile memory
};

// `mode`: what the program is built for; a timing-only one counts its bulk transfers (sim::Program::timing_only).
OpProgram build_gather_program(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& indices,
                               const IpuMachine& machine, sim::Mode mode = sim::Mode::functional);
// The scatter family: scatter_add, scatter_mean, scatter_max and degree_count.
OpProgram build_scatter_add_program(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& indices,
                                    const IpuMachine& machine, sim::Mode mode = sim::Mode::functional);
// matmul (plan from plan_op) and segment_matmul (plan from plan_op with the offsets, which `offsets` must be).
OpProgram build_matmul_program(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& offsets,
                               const IpuMachine& machine, sim::Mode mode = sim::Mode::functional);
// unary, binary and unary_grad, in the linear layout.
OpProgram build_elementwise_program(const Op& op, const OpPlan& plan, const IpuMachine& machine);
// The training step's optimizer_step, sum_to, and loss and loss_grad (planning/training_plan.hpp says
// what each does).
OpProgram build_optimizer_program(const Op& op, const OpPlan& plan, const IpuMachine& machine);
OpProgram build_sum_to_program(const Op& op, const OpPlan& plan, const IpuMachine& machine);
OpProgram build_loss_program(const Op& op, const OpPlan& plan, const IpuMachine& machine,
                             sim::Mode mode = sim::Mode::functional);
// cast: the machine set up for the output's type (op.dtype); the input at op.input_dtype.
OpProgram build_cast_program(const Op& op, const OpPlan& plan, const IpuMachine& machine);
// Tiles of a split, numbered tile(i, s, h) = (i * S + s) * H + h (see planning/plan.hpp).
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

// Marks `program` as built for `mode`: a timing-only program counts its transfers, and the exchanges
// between an op's blocks and the linear layout sum them per tile of `machine` (sim::ExchangePlan::tile_sums).
void set_program_mode(sim::Program& program, const IpuMachine& machine, sim::Mode mode);

// Reserves `program`'s buffer list once for an op planned over `blocks` tiles of `machine`: a handful
// of buffers per block (indices, operand blocks and their copies, partial results, what the exchanges
// deliver) and two per tile of the linear layouts.
void reserve_op_buffers(sim::Program& program, std::int64_t blocks, const IpuMachine& machine);

// One transfer of `bytes` from `src` to `dst`: listed, or counted (sim::TransferCount) when `program`
// is built timing-only.
void add_transfer(const sim::Program& program, sim::ExchangePlan& exchange, const sim::BufferRef& src, std::int64_t bytes,
                  const sim::BufferRef& dst);

// Appends the control step of the on-device repeat loop an op runs in (one vertex on tile 0 costing
// repeat_loop_control_cycles, then its sync), when the machine file gives it a cost.
void append_loop_control(sim::Program& program, const IpuMachine& machine);

// Any op kind. `indices` is the op's index tensor (gather/scatter/degree_count indices, segment_matmul
// offsets) or empty for the ops that have none.
// `mode`: what the program is built for (a timing-only program cannot be loaded functionally).
OpProgram build_op_program(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& indices,
                           const IpuMachine& machine, sim::Mode mode = sim::Mode::functional);

}  // namespace tilesim::ipu
