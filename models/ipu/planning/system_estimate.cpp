#include "models/ipu/planning/system_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/planning/blocks.hpp"

namespace tilesim::ipu {

namespace {

// The bytes of distinct data a gather's or scatter's distribution phase moves: the plan broadcasts the
// same table, messages or zeroed output to several tiles, but a broadcast crosses a link group once.
// Infinity for other phases (the matmul's operand blocks leave the linear layout as separate copies).
double distinct_bytes(const OpPlan& p, const PhaseEstimate& phase, const IpuMachine& machine) {
  const auto value_bytes = static_cast<double>(machine.value_bytes());
  constexpr auto index_bytes = static_cast<double>(kIndexBytes);
  const double cols = static_cast<double>(p.columns_per_block * p.split.column_blocks);
  const double rows = static_cast<double>(p.rows), lookups = static_cast<double>(p.indices);
  if (phase.distribution) {
    const double values = p.kind == OpKind::gather ? rows * cols : (lookups + rows) * cols;
    return values * value_bytes + lookups * index_bytes;
  }
  return std::numeric_limits<double>::infinity();
}

}  // namespace

void add_cross_chip_estimate(OpPlan& plan, const IpuMachine& machine) {
  const sim::MachineConfig& c = machine.chip;
  const std::int64_t C = c.num_chips();
  if (C < 2) return;
  const std::int64_t T = c.tiles_per_chip;
  const std::int64_t plan_chips = std::clamp<std::int64_t>(ceil_div(std::max<std::int64_t>(plan.tiles_used, 1), T), 1, C);

  std::vector<PhaseEstimate> added;
  std::vector<double> load(c.links.size());
  for (const auto& phase : plan.phases) {
    if (phase.traffic == PhaseTraffic::none) continue;
    const sim::Cycles on_chip = std::max<sim::Cycles>(0, phase.cycles - c.exchange_fixed_cycles);
    double total_bytes = static_cast<double>(on_chip) * c.exchange_bytes_per_cycle * static_cast<double>(plan.tiles_used);
    total_bytes = std::min(total_bytes, distinct_bytes(plan, phase, machine));
    if (total_bytes <= 0) continue;  // nothing crosses a link: no latency, no global sync
    // Where the other end of the phase lives: the plan's IPUs, or the IPUs a linearly mapped tensor of
    // these bytes spreads over (at least linear_min_bytes_per_tile on each tile it uses).
    const double linear_tiles = total_bytes / static_cast<double>(std::max<std::int64_t>(1, machine.planner.linear_min_bytes_per_tile));
    const std::int64_t data_chips =
        phase.traffic == PhaseTraffic::among_plan_tiles ? plan_chips
                                     : std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(linear_tiles / static_cast<double>(T))), 1, C);
    if (data_chips < 2 && plan_chips < 2) continue;
    // Under uniform indices each (data IPU, plan IPU) pair carries an equal share, over its route.
    const double pair_bytes = total_bytes / static_cast<double>(data_chips * plan_chips);
    std::fill(load.begin(), load.end(), 0.0);
    std::size_t hops = 0;
    for (std::int64_t from = 0; from < data_chips; ++from) {
      for (std::int64_t to = 0; to < plan_chips; ++to) {
        const auto& route = c.routes[static_cast<std::size_t>(from * C + to)];
        hops = std::max(hops, route.size());
        for (std::int32_t link : route) load[static_cast<std::size_t>(link)] += pair_bytes;
      }
    }
    if (hops == 0) continue;
    sim::Cycles link_cycles = 0;
    for (std::size_t l = 0; l < load.size(); ++l) {
      link_cycles = std::max(link_cycles, static_cast<sim::Cycles>(std::ceil(load[l] / c.links[l].bytes_per_cycle)));
    }
    link_cycles += c.link_latency_cycles * static_cast<sim::Cycles>(hops);
    if (link_cycles > on_chip) added.push_back({"exchange: IPU-Links beyond " + phase.name, link_cycles - on_chip});
    if (c.cross_chip_sync_cycles > 0) added.push_back({"sync: across IPUs", c.cross_chip_sync_cycles});
  }
  for (auto& phase : added) {
    plan.estimated_cycles += phase.cycles;
    plan.objective_cycles += phase.cycles;
    plan.phases.push_back(std::move(phase));
  }
}

}  // namespace tilesim::ipu
