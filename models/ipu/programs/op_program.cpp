#include "models/ipu/programs/op_program.hpp"

#include <stdexcept>

namespace tilesim::ipu {

void set_program_mode(sim::Program& program, const IpuMachine& machine, sim::Mode mode) {
  program.timing_only = mode == sim::Mode::timing_only;
  program.tile_sums_num_tiles = program.timing_only ? machine.chip.num_tiles : 0;
  program.tile_sums_tiles_per_chip = machine.chip.tiles_per_chip;
}

void reserve_op_buffers(sim::Program& program, std::int64_t blocks, const IpuMachine& machine) {
  program.buffers.reserve(static_cast<std::size_t>(8 * blocks + 2 * static_cast<std::int64_t>(machine.chip.num_tiles)));
}

void add_transfer(const sim::Program& program, sim::ExchangePlan& exchange, const sim::BufferRef& src, std::int64_t bytes,
                  const sim::BufferRef& dst) {
  if (!program.timing_only) {
    exchange.add(src, bytes, dst);
    return;
  }
  exchange.count(program.tile_of(src.buffer), program.tile_of(dst.buffer), bytes, 1);
}

OpProgram build_op_program(const Op& op, const OpPlan& plan, const std::vector<std::int32_t>& indices,
                           const IpuMachine& machine, sim::Mode mode) {
  if (machine.value_dtype != op.dtype) return build_op_program(op, plan, indices, machine_for_op_dtype(machine, op), mode);
  switch (op.kind) {
    case OpKind::gather: return build_gather_program(op, plan, indices, machine, mode);
    case OpKind::scatter_add:
    case OpKind::scatter_mean:
    case OpKind::scatter_max:
    case OpKind::degree_count: return build_scatter_add_program(op, plan, indices, machine, mode);
    case OpKind::matmul:
    case OpKind::segment_matmul: return build_matmul_program(op, plan, indices, machine, mode);
    case OpKind::unary:
    case OpKind::binary:
    case OpKind::unary_grad: return build_elementwise_program(op, plan, machine);
    case OpKind::sum_to: return build_sum_to_program(op, plan, machine);
    case OpKind::loss:
    case OpKind::loss_grad: return build_loss_program(op, plan, machine, mode);
    case OpKind::optimizer_step: return build_optimizer_program(op, plan, machine);
    case OpKind::cast: return build_cast_program(op, plan, machine);
  }
  throw std::logic_error("build_op_program: unknown op kind");
}

}  // namespace tilesim::ipu
