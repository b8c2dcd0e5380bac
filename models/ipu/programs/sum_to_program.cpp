// sum_to as a BSP program: each tile of the input's linear layout sums the elements it holds into
// partial sums of the outputs they feed (planning/training_plan.hpp, sum_to_partials), then the
// reduction across tiles (programs/reduction_program.hpp) brings the partials to the output's linear
// layout and adds them up there.
#include <map>
#include <vector>

#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/programs/value_storage.hpp"
#include "models/ipu/planning/training_plan.hpp"
#include "models/ipu/programs/linear_buffers.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "models/ipu/programs/reduction_program.hpp"

namespace tilesim::ipu {

OpProgram build_sum_to_program(const Op& op, const OpPlan& plan, const IpuMachine& machine) {
  (void)plan;  // the layouts and the reduction schedule follow from the shape, as the planner costed them
  const std::int64_t F = op.shape.num_features, G = op.shape.other_groups, per_group = F / G;
  const bool row_sums = op.shape.other_rows != 1 || op.shape.num_inputs == 1;
  require_value_dtype(op, machine);
  const std::int64_t vb = machine.value_bytes();
  const LinearLayout in = linear_layout(op.shape.num_inputs * F, vb, machine);
  const LinearLayout out_layout = linear_layout(op.shape.other_rows * G, vb, machine);
  OpProgram out;
  out.program.name = op.name;
  const auto in_buf = add_linear_buffers(out.program, "input (linear)", in, vb, &out.input);
  out.input_width = 1;
  out.output_width = 1;

  const std::vector<PartialSlice> partials = sum_to_partials(op, in);
  std::map<std::int64_t, PartialBuffer> buffers;
  sim::Superstep partial_step{"partial sums", {"Reduce (partial sums on each tile)", {}}, {"", {}}};
  for (const PartialSlice& s : partials) {
    const Range r = in.tile_range(s.tile);
    const std::int64_t k = s.outputs.size(), n = r.size();
    const auto tile = static_cast<sim::TileId>(s.tile);
    // Partial sums are float32 whatever the values (reduction_program.hpp), so a half sum rounds once.
    const auto partial = out.program.add_buffer("partial sums", tile, k * kPartialBytes);
    buffers[s.tile] = {partial, s.outputs.begin};
    sim::Vertex v;
    v.codelet = partial_step.compute.name;
    v.supervisor_cycles = machine.codelets.supervisor_cycles;
    v.worker_cycles = worker_split_cycles(k, machine.chip.worker_contexts, [&](std::int64_t kw) {
      return partial_sum_worker_cycles(kw, k, n, machine.codelets);
    });
    v.buffers = {{in_buf[static_cast<std::size_t>(s.tile)], 0}, {partial, 0}};
    v.execute = with_value_storage(machine.value_dtype, [&](auto storage) -> sim::VertexBody {
      using V = decltype(storage);
      return [begin = r.begin, n, k, first = s.outputs.begin, F, per_group, row_sums](const sim::VertexContext& ctx) {
        const auto* x = ctx.as<const V>(0);
        std::vector<double> sum(static_cast<std::size_t>(k), 0.0);
        for (std::int64_t e = 0; e < n; ++e) {
          const std::int64_t flat = begin + e;
          const std::int64_t o = row_sums ? flat / per_group : (flat % F) / per_group;
          sum[static_cast<std::size_t>(o - first)] += value(x[e]);
        }
        auto* y = ctx.as<float>(1);
        for (std::int64_t j = 0; j < k; ++j) y[j] = static_cast<float>(sum[static_cast<std::size_t>(j)]);
      };
    });
    partial_step.compute.vertices.push_back({tile, std::move(v)});
    out.sram_read_bytes += n * vb;
    out.sram_write_bytes += k * kPartialBytes;
  }
  const ReductionSchedule schedule = plan_reduction(partials, out_layout, false, machine);
  out.output = build_reduction(out, std::move(partial_step), buffers, schedule, 1.0, machine, machine.value_dtype);
  append_loop_control(out.program, machine);
  return out;
}

}  // namespace tilesim::ipu
