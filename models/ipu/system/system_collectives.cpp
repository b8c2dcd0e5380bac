#include "models/ipu/system/system_collectives.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/planning/linear_layout.hpp"
#include "models/ipu/system/collective_closed_forms.hpp"
#include "models/ipu/system/pipeline_program.hpp"
#include "models/ipu/system/pipeline_schedule.hpp"
#include "models/ipu/system/ring_collective.hpp"
#include "sim/engine.hpp"

namespace tilesim::ipu {


IpuMachine ipu_subsystem(const IpuMachine& system, std::int32_t num_ipus) {
  const std::int32_t all = system.system.num_ipus;
  if (num_ipus < 1 || all % num_ipus != 0) {
    throw InputError("ipu machine " + system.chip.name + ": a replica or stage of " + std::to_string(num_ipus) +
                     " IPUs does not divide its " + std::to_string(all) + " IPUs");
  }
  if (num_ipus == all) return system;
  IpuMachine sub = system;
  const std::int32_t tiles_per_ipu = system.chip.tiles_per_chip > 0 ? system.chip.tiles_per_chip : system.chip.num_tiles;
  sub.chip.name = system.chip.name + "[" + std::to_string(num_ipus) + (num_ipus == 1 ? " IPU]" : " IPUs]");
  sub.chip.num_tiles = tiles_per_ipu * num_ipus;
  sub.system.num_ipus = num_ipus;
  if (num_ipus == 1) {
    // One IPU: no links, no cross-chip sync; the chip's own figures.
    sub.chip.tiles_per_chip = 0;
    sub.chip.links.clear();
    sub.chip.routes.clear();
    sub.chip.link_latency_cycles = 0;
    sub.chip.cross_chip_sync_cycles = 0;
    sub.system.ipus_per_machine = 0;
    return sub;
  }
  if (num_ipus % 2 != 0) {
    throw InputError("ipu machine " + system.chip.name + ": a replica or stage of " + std::to_string(num_ipus) +
                     " IPUs is not a whole number of ladder rungs");
  }
  // The first num_ipus IPUs keep their links; a part of one machine is one machine. The global sync stays
  // the whole system's (its figure is the system file's; no source gives a part's).
  if (sub.system.ipus_per_machine >= num_ipus) sub.system.ipus_per_machine = 0;
  if (sub.system.ipus_per_machine > 0 && num_ipus % sub.system.ipus_per_machine != 0) {
    throw InputError("ipu machine " + system.chip.name + ": a replica or stage of " + std::to_string(num_ipus) +
                     " IPUs is not a whole number of its " + std::to_string(system.system.ipus_per_machine) +
                     "-IPU machines");
  }
  set_ladder_links(sub.chip, sub.system);
  return sub;
}

namespace {

CollectiveTiming run_timing(const IpuMachine& system, sim::Program program) {
  sim::Engine& engine = engine_for(system);
  CollectiveTiming t;
  engine.load(program, system.chip, sim::Mode::timing_only);
  t.stats = engine.run();
  t.cycles = t.stats.total_cycles;
  t.time_s = system.chip.seconds(t.cycles);
  return t;
}

}  // namespace

AllreducePlan plan_allreduce(const IpuMachine& system, std::int32_t replicas, AllreduceAlgorithm algorithm) {
  const std::int32_t ipus = system.system.num_ipus;
  if (replicas < 1 || ipus % replicas != 0) {
    throw InputError("ipu machine " + system.chip.name + ": " + std::to_string(replicas) +
                     " replicas do not divide its " + std::to_string(ipus) + " IPUs");
  }
  AllreducePlan plan;
  plan.replicas = replicas;
  plan.ipus_per_replica = ipus / replicas;
  if (replicas == 1) return plan;
  const std::int32_t k = plan.ipus_per_replica;
  const std::int32_t per_machine = system.system.ipus_per_machine > 0 ? system.system.ipus_per_machine : ipus;
  const std::int32_t machines = ipus / per_machine;
  // One IPU per replica: the Hamiltonian ring's order keeps each step on one link group.
  const std::vector<std::int32_t> order = hamiltonian_ring(system);
  auto ring_over = [&](const std::vector<std::int32_t>& replica_order, std::int32_t i) {
    std::vector<std::int32_t> ring;
    for (auto r : replica_order) ring.push_back(r * k + i);
    return ring;
  };
  std::vector<std::int32_t> replica_order;
  if (k == 1) {
    replica_order = order;
  } else {
    for (std::int32_t r = 0; r < replicas; ++r) replica_order.push_back(r);
  }
  const bool hierarchical = algorithm == AllreduceAlgorithm::hierarchical && machines > 1 && k < per_machine &&
                            per_machine % k == 0;
  if (!hierarchical) {
    plan.algorithm = AllreduceAlgorithm::ring;
    for (std::int32_t i = 0; i < k; ++i) plan.outer_rings.push_back(ring_over(replica_order, i));
    return plan;
  }
  plan.algorithm = AllreduceAlgorithm::hierarchical;
  // Inside each machine: its replicas in ring order (for one IPU each, the machine's own Hamiltonian ring,
  // which the system's ring lists machine by machine).
  const std::int32_t local = per_machine / k;
  for (std::int32_t m = 0; m < machines; ++m) {
    std::vector<std::int32_t> machine_order;
    for (auto r : replica_order) {
      if (r * k / per_machine == m) machine_order.push_back(r);
    }
    for (std::int32_t i = 0; i < k; ++i) plan.inner_rings.push_back(ring_over(machine_order, i));
  }
  // Across machines: the IPUs at the same place in every machine.
  for (std::int32_t c = 0; c < per_machine; ++c) {
    std::vector<std::int32_t> ring;
    for (std::int32_t m = 0; m < machines; ++m) ring.push_back(m * per_machine + c);
    plan.outer_rings.push_back(std::move(ring));
  }
  plan.inner_size = local;
  return plan;
}

sim::Program allreduce_program(const IpuMachine& system, std::int64_t bytes, const AllreducePlan& plan,
                               RingCollectiveBuilder& builder) {
  (void)bytes;
  const TileRegion whole = builder.whole();
  if (plan.algorithm == AllreduceAlgorithm::ring || plan.inner_rings.empty()) {
    const std::vector<TileRegion> regions(plan.outer_rings.size(), whole);
    builder.reduce_scatter(plan.outer_rings, regions);
    builder.all_gather(plan.outer_rings, regions);
  } else {
    const std::vector<TileRegion> inner_regions(plan.inner_rings.size(), whole);
    builder.reduce_scatter(plan.inner_rings, inner_regions);
    // Each outer ring's members sit at the same position of their inner rings, so own the same piece.
    std::vector<TileRegion> outer_regions;
    for (const auto& ring : plan.outer_rings) {
      const std::int32_t member = ring.front();
      std::int64_t position = -1;
      for (const auto& inner : plan.inner_rings) {
        const auto at = std::find(inner.begin(), inner.end(), member);
        if (at != inner.end()) position = at - inner.begin();
      }
      outer_regions.push_back(builder.owned_after_reduce_scatter(whole, plan.inner_size, position));
    }
    builder.reduce_scatter(plan.outer_rings, outer_regions);
    builder.all_gather(plan.outer_rings, outer_regions);
    builder.all_gather(plan.inner_rings, inner_regions);
  }
  builder.finish();
  (void)system;
  return builder.take_program();
}

CollectiveTiming simulate_allreduce(const IpuMachine& system, std::int64_t bytes, std::int32_t replicas,
                                    AllreduceAlgorithm algorithm) {
  const AllreducePlan plan = plan_allreduce(system, replicas, algorithm);
  if (replicas == 1 || bytes <= 0) return {};
  // Each IPU of a replica holds its share of the replica's gradients.
  const std::int64_t elements = (bytes + kFloat32Bytes - 1) / kFloat32Bytes;
  const std::int64_t per_ipu = (elements + plan.ipus_per_replica - 1) / plan.ipus_per_replica;
  RingCollectiveBuilder builder(system, per_ipu, "allreduce." + to_string(plan.algorithm));
  CollectiveTiming t = run_timing(system, allreduce_program(system, bytes, plan, builder));
  t.closed_form_s = system.chip.seconds(static_cast<double>(allreduce_closed_form_cycles(system, per_ipu, plan)));
  return t;
}

PipelineTiming simulate_pipeline(const IpuMachine& system, std::int32_t first_ipu,
                                 const std::vector<double>& stage_forward_s, const std::vector<double>& stage_backward_s,
                                 const std::vector<std::int64_t>& boundary_bytes, std::int64_t micro_batches,
                                 PipelineSchedule schedule) {
  const auto stages = static_cast<std::int32_t>(stage_forward_s.size());
  const bool training = !stage_backward_s.empty();
  if (stages < 1 || (training && stage_backward_s.size() != stage_forward_s.size()) ||
      boundary_bytes.size() + 1 != stage_forward_s.size()) {
    throw std::logic_error("simulate_pipeline: " + std::to_string(stages) + " stages need as many backward times and " +
                           "one boundary fewer");
  }
  if (first_ipu < 0 || first_ipu + stages > system.system.num_ipus) {
    throw InputError("ipu machine " + system.chip.name + ": a pipeline of " + std::to_string(stages) +
                     " stages from IPU " + std::to_string(first_ipu) + " needs more than its " +
                     std::to_string(system.system.num_ipus) + " IPUs");
  }
  const LockstepSchedule lockstep = lockstep_schedule(stages, micro_batches, schedule, training);
  std::vector<sim::Cycles> forward_cycles, backward_cycles;
  for (std::int32_t s = 0; s < stages; ++s) {
    forward_cycles.push_back(static_cast<sim::Cycles>(std::ceil(stage_forward_s[static_cast<std::size_t>(s)] * system.chip.clock_hz)));
    backward_cycles.push_back(
        training ? static_cast<sim::Cycles>(std::ceil(stage_backward_s[static_cast<std::size_t>(s)] * system.chip.clock_hz)) : 0);
  }
  sim::Program program = pipeline_program(system, first_ipu, forward_cycles, backward_cycles, boundary_bytes, lockstep);
  const CollectiveTiming run = run_timing(system, std::move(program));
  PipelineTiming t;
  t.stats = run.stats;
  t.time_s = run.time_s;
  double busiest_s = 0;
  for (std::int32_t s = 0; s < stages; ++s) {
    const double busy = static_cast<double>(micro_batches) *
                        (stage_forward_s[static_cast<std::size_t>(s)] + (training ? stage_backward_s[static_cast<std::size_t>(s)] : 0));
    t.stage_busy_s.push_back(busy);
    busiest_s = std::max(busiest_s, busy);
  }
  t.bubble_s = std::max(0.0, t.time_s - busiest_s);
  t.peak_in_flight = lockstep.peak_in_flight;
  t.closed_form_s = system.chip.seconds(static_cast<double>(
      pipeline_closed_form_cycles(system, first_ipu, forward_cycles, backward_cycles, boundary_bytes, micro_batches, training)));
  return t;
}

}  // namespace tilesim::ipu
