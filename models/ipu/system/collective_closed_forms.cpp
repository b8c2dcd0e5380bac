#include "models/ipu/system/collective_closed_forms.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/planning/linear_layout.hpp"
#include "sim/engine.hpp"

namespace tilesim::ipu {

namespace {

double ceil_div(double a, double b) { return std::ceil(a / b); }

sim::Cycles route_latency(const sim::MachineConfig& config, const std::vector<std::int32_t>& route) {
  sim::Cycles latency = 0;
  for (auto link : route) {
    const auto own = config.links[static_cast<std::size_t>(link)].latency_cycles;
    latency += own >= 0 ? own : config.link_latency_cycles;
  }
  return latency;
}

const std::vector<std::int32_t>& route(const sim::MachineConfig& config, std::int32_t from, std::int32_t to) {
  return config.routes[static_cast<std::size_t>(from * config.num_chips() + to)];
}

// The link cycles of one step in which each hop (from, to) moves `bytes`: the slowest hop's busiest group
// (carrying every hop routed over it) plus its route's latency.
double hops_link_cycles(const sim::MachineConfig& config, const std::vector<std::pair<std::int32_t, std::int32_t>>& hops,
                        double bytes) {
  std::map<std::int32_t, std::int64_t> sharing;
  for (auto [from, to] : hops) {
    for (auto link : route(config, from, to)) ++sharing[link];
  }
  double slowest = 0;
  for (auto [from, to] : hops) {
    double busiest = 0;
    for (auto link : route(config, from, to)) {
      busiest = std::max(busiest, ceil_div(bytes * static_cast<double>(sharing[link]),
                                           config.links[static_cast<std::size_t>(link)].bytes_per_cycle));
    }
    slowest = std::max(slowest, busiest + static_cast<double>(route_latency(config, route(config, from, to))));
  }
  return slowest;
}

// One IPU's share per tile of `elements` laid out linearly, as the programs lay them out (one IPU of the system).
std::int64_t largest_tile_share(std::int64_t elements, const IpuMachine& system) {
  return linear_layout(elements, kFloat32Bytes, ipu_subsystem(system, 1)).elements_per_tile;
}

}  // namespace

sim::Cycles ring_phase_closed_form_cycles(const IpuMachine& system, const std::vector<std::vector<std::int32_t>>& rings,
                                          std::int64_t elements_per_ipu, std::int64_t tile_elements, bool reduce_scatter) {
  if (rings.empty() || rings.front().size() < 2 || elements_per_ipu <= 0) return 0;
  const sim::MachineConfig& config = system.chip;
  const auto R = static_cast<std::int64_t>(rings.front().size());
  std::vector<std::pair<std::int32_t, std::int32_t>> hops;
  for (const auto& ring : rings) {
    for (std::size_t q = 0; q < ring.size(); ++q) hops.push_back({ring[q], ring[(q + 1) % ring.size()]});
  }
  // D / R a step: exact when every tile's share splits evenly into R pieces; with uneven pieces a step's
  // bytes vary about this mean (the simulation times each step's own).
  const double step_bytes = static_cast<double>(elements_per_ipu) * kFloat32Bytes / static_cast<double>(R);
  const std::int64_t tile_piece = (tile_elements + R - 1) / R;
  const double on_chip = ceil_div(static_cast<double>(tile_piece * kFloat32Bytes), config.exchange_bytes_per_cycle);
  const double link = hops_link_cycles(config, hops, step_bytes);
  const double exchange = static_cast<double>(config.exchange_fixed_cycles) + std::max(on_chip, link) +
                          static_cast<double>(config.exchange_cycles_per_region);
  const double sync = static_cast<double>(config.sync_cycles + config.cross_chip_sync_cycles);
  double total = static_cast<double>(R - 1) * (sync + exchange);
  if (reduce_scatter) {
    const CodeletCosts& c = float32_partial_codelets(system);
    const std::int64_t per_worker = (tile_piece + config.worker_contexts - 1) / config.worker_contexts;
    const sim::Cycles sum = sim::barrel_tile_cycles(binary_worker_cycles(BinaryFn::add, per_worker, c),
                                                    config.worker_contexts, c.supervisor_cycles);
    total += static_cast<double>(R - 1) * static_cast<double>(config.compute_fixed_cycles + sum);
  }
  return static_cast<sim::Cycles>(std::llround(total));
}

sim::Cycles allreduce_closed_form_cycles(const IpuMachine& system, std::int64_t elements_per_ipu, const AllreducePlan& plan) {
  if (plan.replicas <= 1) return 0;
  const std::int64_t tile = largest_tile_share(elements_per_ipu, system);
  if (plan.inner_rings.empty()) {
    return ring_phase_closed_form_cycles(system, plan.outer_rings, elements_per_ipu, tile, true) +
           ring_phase_closed_form_cycles(system, plan.outer_rings, elements_per_ipu, tile, false);
  }
  const std::int64_t shard = (elements_per_ipu + plan.inner_size - 1) / plan.inner_size;
  const std::int64_t shard_tile = (tile + plan.inner_size - 1) / plan.inner_size;
  return ring_phase_closed_form_cycles(system, plan.inner_rings, elements_per_ipu, tile, true) +
         ring_phase_closed_form_cycles(system, plan.outer_rings, shard, shard_tile, true) +
         ring_phase_closed_form_cycles(system, plan.outer_rings, shard, shard_tile, false) +
         ring_phase_closed_form_cycles(system, plan.inner_rings, elements_per_ipu, tile, false);
}

sim::Cycles pipeline_closed_form_cycles(const IpuMachine& system, std::int32_t first_ipu,
                                        const std::vector<sim::Cycles>& forward_cycles,
                                        const std::vector<sim::Cycles>& backward_cycles,
                                        const std::vector<std::int64_t>& boundary_bytes, std::int64_t micro_batches,
                                        bool training) {
  const sim::MachineConfig& config = system.chip;
  const double ways = training ? 2 : 1;
  const auto S = static_cast<std::int64_t>(forward_cycles.size());
  const double cycles_each_way = static_cast<double>(micro_batches + S - 1);
  const double f = static_cast<double>(*std::max_element(forward_cycles.begin(), forward_cycles.end()));
  const double b = training ? static_cast<double>(*std::max_element(backward_cycles.begin(), backward_cycles.end())) : 0;
  double total = cycles_each_way * (f + b) +
                 ways * cycles_each_way * static_cast<double>(config.compute_fixed_cycles + config.sync_cycles);
  if (S > 1) {
    double transfer = 0;
    for (std::size_t s = 0; s < boundary_bytes.size(); ++s) {
      if (boundary_bytes[s] <= 0) continue;
      const std::int32_t from = first_ipu + static_cast<std::int32_t>(s);
      const double tile_bytes = static_cast<double>(largest_tile_share((boundary_bytes[s] + kFloat32Bytes - 1) / kFloat32Bytes, system) * kFloat32Bytes);
      const double link = hops_link_cycles(config, {{from, from + 1}}, static_cast<double>(boundary_bytes[s]));
      transfer = std::max(transfer, std::max(ceil_div(tile_bytes, config.exchange_bytes_per_cycle), link));
    }
    const double exchange = static_cast<double>(config.cross_chip_sync_cycles + config.exchange_fixed_cycles +
                                                config.exchange_cycles_per_region) + transfer;
    total += ways * static_cast<double>(micro_batches + S - 2) * exchange;
  }
  return static_cast<sim::Cycles>(std::llround(total));
}

}  // namespace tilesim::ipu
