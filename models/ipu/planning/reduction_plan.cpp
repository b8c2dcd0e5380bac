#include "models/ipu/planning/reduction_plan.hpp"

#include <algorithm>
#include <limits>

#include "common/integer_math.hpp"
#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/planning/phase_builders.hpp"
#include "models/ipu/planning/phase_estimate.hpp"
#include "sim/program.hpp"

namespace tilesim::ipu {

namespace {

Range intersect(Range a, Range b) { return {std::max(a.begin, b.begin), std::max(std::max(a.begin, b.begin), std::min(a.end, b.end))}; }

std::int64_t slice_bytes(Range r) { return r.size() * kPartialBytes; }  // partial sums are float32

// A sum of `terms` partials over `outputs` elements on one tile: a multi-worker vertex whose workers
// share the outputs (Reduce), with the mean's multiply after the sum when `scale`.
sim::Cycles sum_vertex_estimate(std::int64_t outputs, std::int64_t terms, bool scale, const IpuMachine& m) {
  return spread_vertex_estimate(outputs, m, [&](std::int64_t n) {
    return reduce_worker_cycles(n, terms, m.codelets) + (scale ? binary_worker_cycles(BinaryFn::multiply, n, m.codelets) : 0);
  });
}

// Per-tile tallies of one superstep, turned into its phases the way the engine times them.
struct StepTally {
  explicit StepTally(std::int64_t tiles)
      : compute(static_cast<std::size_t>(tiles), 0), sent(compute.size(), 0), received(compute.size(), 0) {}
  std::vector<sim::Cycles> compute;
  std::vector<std::int64_t> sent, received;
  void move(std::int64_t from, std::int64_t to, std::int64_t bytes) {
    if (from == to) return;  // read where it is
    sent[static_cast<std::size_t>(from)] += bytes;
    received[static_cast<std::size_t>(to)] += bytes;
  }
  sim::Cycles busiest_compute() const { return *std::max_element(compute.begin(), compute.end()); }
  std::int64_t busiest_exchange() const {
    std::int64_t most = 0;
    for (std::size_t t = 0; t < sent.size(); ++t) most = std::max({most, sent[t], received[t]});
    return most;
  }
};

}  // namespace

bool ReductionSchedule::two_stages() const {
  return std::any_of(owners.begin(), owners.end(), [](const OwnerReduction& o) { return !o.groups.empty(); });
}

ReductionSchedule schedule_reduction(const std::vector<PartialSlice>& partials, const LinearLayout& out, std::int64_t fan_in) {
  ReductionSchedule r;
  r.fan_in = std::max<std::int64_t>(1, fan_in);
  std::vector<std::vector<PartialSlice>> contributors(static_cast<std::size_t>(out.tiles_used));
  for (const PartialSlice& p : partials) {
    if (p.outputs.empty()) continue;
    // The owners a slice reaches are the linear tiles its outputs span.
    const std::int64_t first = p.outputs.begin / out.elements_per_tile, last = (p.outputs.end - 1) / out.elements_per_tile;
    for (std::int64_t u = first; u <= last && u < out.tiles_used; ++u) {
      const Range cut = intersect(p.outputs, out.tile_range(u));
      if (!cut.empty()) contributors[static_cast<std::size_t>(u)].push_back({p.tile, cut});
    }
  }
  for (std::int64_t u = 0; u < out.tiles_used; ++u) {
    OwnerReduction o;
    o.tile = u;
    o.outputs = out.tile_range(u);
    auto& c = contributors[static_cast<std::size_t>(u)];
    if (static_cast<std::int64_t>(c.size()) <= r.fan_in) {
      o.direct = std::move(c);
    } else {
      for (std::size_t k = 0; k < c.size(); k += static_cast<std::size_t>(r.fan_in)) {
        ReductionGroup g;
        g.members.assign(c.begin() + static_cast<std::ptrdiff_t>(k),
                         c.begin() + static_cast<std::ptrdiff_t>(std::min(c.size(), k + static_cast<std::size_t>(r.fan_in))));
        g.outputs = g.members.front().outputs;
        for (const auto& s : g.members) g.outputs = {std::min(g.outputs.begin, s.outputs.begin), std::max(g.outputs.end, s.outputs.end)};
        o.groups.push_back(std::move(g));
      }
    }
    r.owners.push_back(std::move(o));
  }
  return r;
}

std::int64_t add_reduction_estimate(OpPlan& plan, const ReductionSchedule& schedule, bool scale_outputs, const IpuMachine& m) {
  const std::int64_t tiles = m.chip.num_tiles;
  std::vector<std::int64_t> bytes(static_cast<std::size_t>(tiles), 0);
  auto hold = [&](std::int64_t tile, std::int64_t b) { bytes[static_cast<std::size_t>(tile)] += sim::align_buffer_offset(b); };
  if (schedule.two_stages()) {
    StepTally stage1(tiles);
    for (const auto& o : schedule.owners) {
      for (const auto& g : o.groups) {
        for (const auto& s : g.members) {
          stage1.move(s.tile, g.tile(), slice_bytes(s.outputs));
          if (s.tile != g.tile()) hold(g.tile(), slice_bytes(s.outputs));
        }
        stage1.compute[static_cast<std::size_t>(g.tile())] +=
            sum_vertex_estimate(g.outputs.size(), static_cast<std::int64_t>(g.members.size()), false, m);
        hold(g.tile(), slice_bytes(g.outputs));
      }
    }
    append_phase(plan, "sync", m.chip.sync_cycles);
    const std::int64_t busiest = stage1.busiest_exchange();
    append_phase(plan, "exchange: partial sums to their group's first tile", exchange_phase_estimate(busiest, busiest, m),
              PhaseTraffic::among_plan_tiles);
    append_phase(plan, "compute: Reduce (group sums)", compute_phase_estimate(stage1.busiest_compute(), m));
  }
  StepTally stage2(tiles);
  for (const auto& o : schedule.owners) {
    for (const auto& s : o.direct) {
      stage2.move(s.tile, o.tile, slice_bytes(s.outputs));
      if (s.tile != o.tile) hold(o.tile, slice_bytes(s.outputs));
    }
    for (const auto& g : o.groups) {
      stage2.move(g.tile(), o.tile, slice_bytes(g.outputs));
      if (g.tile() != o.tile) hold(o.tile, slice_bytes(g.outputs));
    }
    stage2.compute[static_cast<std::size_t>(o.tile)] += sum_vertex_estimate(o.outputs.size(), o.terms(), scale_outputs, m);
    hold(o.tile, slice_bytes(o.outputs));
  }
  append_phase(plan, "sync", m.chip.sync_cycles);
  const std::int64_t busiest = stage2.busiest_exchange();
  append_phase(plan, "exchange: partial sums to the output's tiles", exchange_phase_estimate(busiest, busiest, m),
            PhaseTraffic::linear_layout);
  append_phase(plan, "compute: Reduce (output sums)", compute_phase_estimate(stage2.busiest_compute(), m));
  return *std::max_element(bytes.begin(), bytes.end());
}

ReductionSchedule plan_reduction(const std::vector<PartialSlice>& partials, const LinearLayout& out, bool scale_outputs,
                                 const IpuMachine& m) {
  std::int64_t most = 1;
  for (const auto& o : schedule_reduction(partials, out, std::numeric_limits<std::int64_t>::max()).owners)
    most = std::max(most, o.terms());
  ReductionSchedule best;
  sim::Cycles best_cycles = 0;
  for (std::int64_t fan_in : powers_of_two_up_to(most)) {
    ReductionSchedule s = schedule_reduction(partials, out, fan_in);
    OpPlan cost;
    add_reduction_estimate(cost, s, scale_outputs, m);
    if (best.owners.empty() || cost.estimated_cycles < best_cycles) {
      best_cycles = cost.estimated_cycles;
      best = std::move(s);
    }
  }
  return best;
}

}  // namespace tilesim::ipu
