#include "runs/plan_budgets.hpp"

#include <sstream>

namespace tilesim::runs {

std::string format_plan_budgets(const std::vector<BackendResult>& results) {
  std::ostringstream out;
  for (const auto& r : results) {
    for (const auto& o : r.ops) {
      if (!o.plan.is_object() || !o.plan.contains("temporary_memory")) continue;
      const auto& t = o.plan["temporary_memory"];
      if (out.tellp() == 0) out << "\nplans under the available memory proportion (temporary bytes per tile):\n";
      out << "  " << r.backend << " " << o.op << ": proportion " << t["available_memory_proportion"].get<double>() << ", plan "
          << o.plan.value("row_blocks", 1) << " row x " << o.plan.value("column_blocks", 1) << " column blocks x "
          << o.plan.value("index_groups", 1) << " index groups x " << o.plan.value("k_blocks", 1) << " inner blocks on "
          << o.plan.value("tiles_used", 0) << " tiles, temporaries " << t["estimated_temporary_tile_bytes"].get<std::int64_t>()
          << " B of a " << t["temporary_budget_bytes"].get<std::int64_t>() << " B budget"
          << (t["within_budget"].get<bool>() ? "" : " (OVER: no plan's temporaries fit; the fastest plan that fits the SRAM)")
          << ", peak " << o.plan.value("estimated_peak_tile_bytes", 0) << " B\n";
    }
  }
  return out.str();
}

}  // namespace tilesim::runs
