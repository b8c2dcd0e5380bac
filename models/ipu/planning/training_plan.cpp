#include "models/ipu/planning/training_plan.hpp"

#include <algorithm>

#include "common/integer_math.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/machine/training_codelet_costs.hpp"
#include "models/ipu/planning/linear_layout.hpp"
#include "models/ipu/planning/phase_estimate.hpp"
#include "models/ipu/planning/system_estimate.hpp"
#include "sim/program.hpp"

namespace tilesim::ipu {

namespace {

std::int64_t aligned(std::int64_t bytes) { return sim::align_buffer_offset(bytes); }

void add_phase(OpPlan& p, const std::string& name, sim::Cycles cycles, PhaseTraffic traffic = PhaseTraffic::none) {
  if (cycles == 0) return;
  p.phases.push_back({name, cycles, traffic});
  p.estimated_cycles += cycles;
  p.objective_cycles += cycles;
}

// A plan over the linear layout of `elements` (its fields as plan_elementwise fills them).
OpPlan linear_plan(const Op& op, std::int64_t elements, const IpuMachine& m) {
  OpPlan p;
  p.kind = op.kind;
  const LinearLayout l = linear_layout(elements, kValueBytes, m);
  p.rows = op.shape.num_inputs;
  p.rows_per_block = l.elements_per_tile;
  p.columns_per_block = 1;
  p.tiles_used = l.tiles_used;
  return p;
}

void add_loop_control(OpPlan& p, const IpuMachine& m) {
  if (m.planner.repeat_loop_control_cycles == 0) return;
  add_phase(p, "compute: repeat loop control", m.planner.repeat_loop_control_cycles);
  add_phase(p, "sync", m.chip.sync_cycles);
}

}  // namespace

OpPlan plan_optimizer_step(const Op& op, const IpuMachine& m) {
  const std::int64_t P = op.shape.num_inputs * op.shape.num_features, S = op.optimizer.state_rows();
  OpPlan p = linear_plan(op, P, m);
  const std::int64_t n = std::min(p.rows_per_block, P);  // the busiest tile's elements: tile 0's
  const bool adam = op.optimizer.kind == OptimizerSpec::Kind::adam;
  if (adam && p.tiles_used > 1) {
    // Adam's step number, on tile 0, to every other tile the parameter spans.
    add_phase(p, "sync", m.chip.sync_cycles);
    add_phase(p, "exchange: step number to the parameter's tiles", exchange_phase_estimate(kValueBytes, kValueBytes, m),
              PhaseTraffic::linear_layout);
  }
  const sim::Cycles update =
      spread_vertex_estimate(n, m, [&](std::int64_t k) { return optimizer_worker_cycles(op.optimizer, k, m.codelets); });
  add_phase(p, "compute: " + to_string(op.optimizer.kind) + " update (ScaledAdd and elementwise vertices)",
            compute_phase_estimate(update, m));
  add_loop_control(p, m);
  add_cross_chip_estimate(p, m);
  // Parameter, gradient, state rows and the output rows (parameter and state), and Adam's step number.
  p.estimated_peak_tile_bytes = 2 * aligned(n * kValueBytes) + aligned(S * n * kValueBytes) + aligned((1 + S) * n * kValueBytes) +
                                (adam ? 2 * aligned(kValueBytes) : 0);
  return p;
}

}  // namespace tilesim::ipu
