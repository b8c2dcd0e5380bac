#include "models/ipu/planning/temporary_budget.hpp"

#include <cmath>

namespace tilesim::ipu {

double available_memory_proportion(const Op& op, const IpuMachine& machine) {
  return op.available_memory_proportion > 0 ? op.available_memory_proportion : machine.planner.memory_fraction;
}

std::int64_t temporary_budget_bytes(double proportion, const IpuMachine& machine) {
  return static_cast<std::int64_t>(std::floor(proportion * static_cast<double>(machine.chip.sram_bytes_per_tile)));
}

const OpPlan* choose_within_budget(const std::vector<OpPlan>& plans, double proportion, const IpuMachine& machine,
                                   OpPlan& chosen) {
  const std::int64_t sram = machine.chip.sram_bytes_per_tile;
  const std::int64_t budget = temporary_budget_bytes(proportion, machine);
  const OpPlan* best_in_budget = nullptr;
  const OpPlan* best_in_sram = nullptr;
  auto better = [](const OpPlan* a, const OpPlan& b) {
    return !a || b.objective_cycles < a->objective_cycles ||
           (b.objective_cycles == a->objective_cycles && b.tiles_used < a->tiles_used);
  };
  for (const auto& p : plans) {
    if (p.estimated_peak_tile_bytes > sram) continue;
    if (p.estimated_temporary_tile_bytes <= budget && better(best_in_budget, p)) best_in_budget = &p;
    if (better(best_in_sram, p)) best_in_sram = &p;
  }
  const OpPlan* pick = best_in_budget ? best_in_budget : best_in_sram;
  if (!pick) return nullptr;
  chosen = *pick;
  chosen.available_memory_proportion = proportion;
  chosen.temporary_budget_bytes = budget;
  chosen.temporary_budget_met = best_in_budget != nullptr;
  return pick;
}

void record_budget(OpPlan& plan, double proportion, const IpuMachine& machine) {
  plan.available_memory_proportion = proportion;
  plan.temporary_budget_bytes = temporary_budget_bytes(proportion, machine);
  plan.temporary_budget_met = plan.estimated_temporary_tile_bytes <= plan.temporary_budget_bytes;
}

}  // namespace tilesim::ipu
