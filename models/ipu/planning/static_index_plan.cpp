#include "models/ipu/planning/static_index_plan.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/planning/linear_layout.hpp"
#include "sim/program.hpp"

namespace tilesim::ipu {

std::int64_t static_index_min_tile_bytes(const Op& op, const IpuMachine& machine) {
  if (machine.value_dtype != op.dtype) return static_index_min_tile_bytes(op, machine_for_op_dtype(machine, op));
  const std::int64_t F = op.shape.num_features;
  const LinearLayout in = linear_layout(op.shape.num_inputs * F, machine.value_bytes(), machine);
  const LinearLayout out = linear_layout(op.output_rows() * F, machine.value_bytes(), machine);
  return sim::align_buffer_offset(in.elements_per_tile * machine.value_bytes()) + out.elements_per_tile * machine.value_bytes();
}

OpPlan static_index_plan(const Op& op, const IpuMachine& machine) {
  if (machine.value_dtype != op.dtype) return static_index_plan(op, machine_for_op_dtype(machine, op));
  if (!static_index_kind(op.kind)) throw std::logic_error("static_index_plan: " + to_string(op.kind) + " has no static-index program");
  OpPlan p;
  p.kind = op.kind;
  p.static_indices = true;
  p.rows = op.output_rows();
  p.columns_per_block = op.shape.num_features;
  p.indices = op.num_indices();
  p.indices_per_group = op.num_indices();
  const LinearLayout in = linear_layout(op.shape.num_inputs * op.shape.num_features, machine.value_bytes(), machine);
  const LinearLayout out = linear_layout(op.output_rows() * op.shape.num_features, machine.value_bytes(), machine);
  p.tiles_used = std::max(in.tiles_used, out.tiles_used);
  p.estimated_peak_tile_bytes = static_index_min_tile_bytes(op, machine);
  return p;
}

}  // namespace tilesim::ipu
