#include "apps/memory_proportion.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "common/error.hpp"

namespace tilesim::cli {

std::optional<double> parse_memory_proportion_option(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const std::string expected = "a number greater than 0 and at most 1 (the share of a tile's SRAM an op's temporaries may use)";
  errno = 0;
  char* end = nullptr;
  const double p = std::strtod(text.c_str(), &end);
  const bool whole = end && *end == '\0' && end != text.c_str() && !std::isspace(static_cast<unsigned char>(text.front()));
  if (!whole || errno == ERANGE || !std::isfinite(p) || !(p > 0) || p > 1)
    throw InputError("", "--available-memory-proportion", expected, "\"" + text + "\"");
  return p;
}

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

}  // namespace tilesim::cli
