// IPU Pods and their collectives: the Pod machine files' topology (ladders inside each Bow-2000, a ring of
// gateway links between them), the ring order every all-reduce step of which crosses one link group, the
// all-reduce programs summing for real (functional engine) and taking what their closed forms say, and
// pipelined steps on the engine against theirs.
#include <algorithm>
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "models/ipu/ipu_backend.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/system/collective_closed_forms.hpp"
#include "models/ipu/system/pipeline_schedule.hpp"
#include "models/ipu/system/ring_collective.hpp"
#include "models/ipu/system/system_collectives.hpp"
#include "sim/engine.hpp"

using namespace tilesim;
using namespace tilesim::ipu;

namespace {

// The chips a route visits, from its first link's source.
std::vector<std::int32_t> route_chips(const sim::MachineConfig& c, std::int32_t from, std::int32_t to) {
  std::vector<std::int32_t> chips{from};
  for (auto link : c.routes[static_cast<std::size_t>(from * c.num_chips() + to)]) {
    chips.push_back(c.links[static_cast<std::size_t>(link)].to_chip);
  }
  return chips;
}

const IpuMachine& pod16() {
  static const IpuMachine m = load_ipu_machine("pod16");
  return m;
}

// The engine elaborates once per process, and a run of many cases in one process (a tag's worth) may
// reach this file after a Bow's case has elaborated it: the Pod16's tiles are reserved before any case runs.
const bool pod16_tiles_reserved = (reserve_engine_tiles(pod16().chip.num_tiles), true);

double relative_difference(double a, double b) { return std::abs(a - b) / std::max(std::abs(a), std::abs(b)); }

}  // namespace

TEST_CASE("the Pod machine files: four and sixteen Bow-2000s, gateway links between them", "[unit]") {
  const IpuMachine& pod = pod16();
  CHECK(pod.system.num_ipus == 16);
  CHECK(pod.system.ipus_per_machine == 4);
  CHECK(pod.system.num_machines() == 4);
  CHECK(pod.chip.num_tiles == 16 * 1472);
  CHECK(pod.chip.num_chips() == 16);
  // 100 Gbit/s x 0.85 at 1.85 GHz.
  CHECK(pod.system.gateway_link_bytes_per_cycle == Approx(100e9 * 0.85 / 8 / 1.85e9));
  const IpuMachine pod64 = load_ipu_machine("pod64");
  CHECK(pod64.system.num_ipus == 64);
  CHECK(pod64.system.num_machines() == 16);
  // The global sync grows with the system (the cost model's hops term).
  CHECK(pod64.chip.cross_chip_sync_cycles > pod.chip.cross_chip_sync_cycles);
  CHECK(pod.chip.cross_chip_sync_cycles > load_ipu_machine("bow-2000").chip.cross_chip_sync_cycles);
}

TEST_CASE("Pod routes climb the ladder to the gateway IPU and go round the ring the shorter way", "[unit]") {
  const sim::MachineConfig& c = pod16().chip;
  // Inside a Bow-2000: the ladder as on a Bow-2000 alone (5 -> 6 is a cross-rung group, 4 -> 5 the pair).
  CHECK(route_chips(c, 5, 6) == std::vector<std::int32_t>{5, 6});
  CHECK(route_chips(c, 4, 5) == std::vector<std::int32_t>{4, 5});
  // Forward to the next machine: up to exit IPU 2, the gateway to IPU 4, then the cross-rung group to 7.
  CHECK(route_chips(c, 0, 7) == std::vector<std::int32_t>{0, 2, 4, 7});
  CHECK(route_chips(c, 1, 5) == std::vector<std::int32_t>{1, 2, 4, 5});
  // Machine 0 to machine 3 is one hop backwards: leave by the entry IPU 0, arrive at machine 3's exit IPU 14.
  CHECK(route_chips(c, 3, 12) == std::vector<std::int32_t>{3, 0, 14, 12});
  // Two machines ahead either way: forward on a tie, crossing machine 1 from entry 4 to exit 6.
  CHECK(route_chips(c, 2, 8) == std::vector<std::int32_t>{2, 4, 6, 8});
  // The gateway groups have the gateway's rate and latency; the IPU-Link groups the system's latency.
  const auto& gateway = c.links[static_cast<std::size_t>(c.routes[2 * 16 + 4].front())];
  CHECK(gateway.bytes_per_cycle == Approx(pod16().system.gateway_link_bytes_per_cycle));
  CHECK(gateway.latency_cycles == pod16().system.gateway_latency_cycles);
  CHECK(c.links[static_cast<std::size_t>(c.routes[0 * 16 + 1].front())].latency_cycles < 0);
}

TEST_CASE("the all-reduce ring visits every IPU with one link group per hop", "[unit]") {
  for (const char* name : {"bow-2000", "pod16", "pod64"}) {
    const IpuMachine m = load_ipu_machine(name);
    const auto ring = hamiltonian_ring(m);
    INFO(name);
    REQUIRE(static_cast<std::int32_t>(ring.size()) == m.system.num_ipus);
    auto sorted = ring;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::int32_t> all(ring.size());
    std::iota(all.begin(), all.end(), 0);
    CHECK(sorted == all);
    for (std::size_t q = 0; q < ring.size(); ++q) {
      const auto from = ring[q], to = ring[(q + 1) % ring.size()];
      CHECK(m.chip.routes[static_cast<std::size_t>(from * m.system.num_ipus + to)].size() == 1);
    }
  }
}

TEST_CASE("a Pod's part: one IPU is the chip alone, a Bow-2000's worth keeps its ladder", "[unit]") {
  const IpuMachine one = ipu_subsystem(pod16(), 1);
  CHECK(one.chip.num_tiles == 1472);
  CHECK(one.chip.num_chips() == 1);
  CHECK(one.chip.cross_chip_sync_cycles == 0);
  const IpuMachine four = ipu_subsystem(pod16(), 4);
  CHECK(four.chip.num_chips() == 4);
  CHECK(four.system.ipus_per_machine == 0);  // one machine: no gateway on any route
  CHECK(route_chips(four.chip, 0, 3) == route_chips(load_ipu_machine("bow-2000").chip, 0, 3));
  const IpuMachine eight = ipu_subsystem(pod16(), 8);
  CHECK(eight.system.num_machines() == 2);
  CHECK_THROWS(ipu_subsystem(pod16(), 3));
}

TEST_CASE("the all-reduce programs sum every replica's data into every replica", "[unit]") {
  struct Case {
    const char* machine;
    std::int32_t replicas;
    AllreduceAlgorithm algorithm;
  };
  for (const Case& k : {Case{"bow-2000", 4, AllreduceAlgorithm::ring}, Case{"bow-2000", 2, AllreduceAlgorithm::ring},
                        Case{"pod16", 16, AllreduceAlgorithm::hierarchical}, Case{"pod16", 4, AllreduceAlgorithm::ring},
                        Case{"pod16", 8, AllreduceAlgorithm::hierarchical}}) {
    const IpuMachine system = std::string(k.machine) == "pod16" ? pod16() : load_ipu_machine(k.machine);
    INFO(k.machine << " " << k.replicas << " replicas " << to_string(k.algorithm));
    const AllreducePlan plan = plan_allreduce(system, k.replicas, k.algorithm);
    const std::int64_t per_ipu = 1000;  // a few tiles' worth (the linear layout's minimum share)
    RingCollectiveBuilder builder(system, per_ipu, "allreduce");
    const sim::Program program = allreduce_program(system, per_ipu * 4, plan, builder);
    sim::Engine& engine = engine_for(system);
    engine.load(program, system.chip, sim::Mode::functional);
    // IPU i of replica r holds value r + 1 + element / 1000 at each element of its share.
    const std::int32_t k_ipus = plan.ipus_per_replica;
    for (std::int32_t ipu = 0; ipu < system.system.num_ipus; ++ipu) {
      const std::int32_t replica = ipu / k_ipus;
      std::int64_t first = 0;
      for (std::int64_t t = 0; t < builder.tiles_used(); ++t) {
        const auto n = builder.tile_elements()[static_cast<std::size_t>(t)];
        std::vector<float> values(static_cast<std::size_t>(n));
        for (std::int64_t e = 0; e < n; ++e) values[static_cast<std::size_t>(e)] = static_cast<float>(replica + 1) + static_cast<float>(first + e) / 1000.0f;
        engine.write(builder.acc_buffer(ipu, t), 0, values.data(), n * 4);
        first += n;
      }
    }
    engine.run();
    const double replica_sum = k.replicas * (k.replicas + 1) / 2.0;
    bool all_equal = true;
    for (std::int32_t ipu = 0; ipu < system.system.num_ipus; ++ipu) {
      std::int64_t first = 0;
      for (std::int64_t t = 0; t < builder.tiles_used(); ++t) {
        const auto n = builder.tile_elements()[static_cast<std::size_t>(t)];
        std::vector<float> values(static_cast<std::size_t>(n));
        engine.read(builder.acc_buffer(ipu, t), 0, values.data(), n * 4);
        for (std::int64_t e = 0; e < n; ++e) {
          const double expected = replica_sum + k.replicas * static_cast<double>(first + e) / 1000.0;
          if (std::abs(values[static_cast<std::size_t>(e)] - expected) > 1e-3 * expected) all_equal = false;
        }
        first += n;
      }
    }
    CHECK(all_equal);
  }
}

TEST_CASE("simulated all-reduces agree with their closed forms within 5%", "[formula]") {
  struct Case {
    const char* machine;
    std::int32_t replicas;
    AllreduceAlgorithm algorithm;
    std::int64_t bytes;
  };
  for (const Case& k : {Case{"bow-2000", 4, AllreduceAlgorithm::ring, 4 << 20}, Case{"bow-2000", 4, AllreduceAlgorithm::ring, 64 << 10},
                        Case{"pod16", 16, AllreduceAlgorithm::ring, 4 << 20}, Case{"pod16", 16, AllreduceAlgorithm::hierarchical, 4 << 20},
                        Case{"pod16", 16, AllreduceAlgorithm::hierarchical, 64 << 10}, Case{"pod16", 4, AllreduceAlgorithm::ring, 1 << 20}}) {
    const IpuMachine system = std::string(k.machine) == "pod16" ? pod16() : load_ipu_machine(k.machine);
    const CollectiveTiming t = simulate_allreduce(system, k.bytes, k.replicas, k.algorithm);
    INFO(k.machine << " " << k.replicas << " replicas " << to_string(k.algorithm) << " " << k.bytes
                   << " bytes: simulated " << t.time_s << " s, closed form " << t.closed_form_s << " s");
    CHECK(t.time_s > 0);
    CHECK(relative_difference(t.time_s, t.closed_form_s) < 0.05);
    // Bandwidth bound: no faster than moving 2 (R-1)/R of the bytes over the slowest link group of the ring.
    const double slowest_link_bytes_per_s = (k.replicas == 16 ? system.system.gateway_link_bytes_per_cycle
                                                              : 2 * system.system.link_bytes_per_cycle) * system.chip.clock_hz;
    if (k.replicas == 16 || std::string(k.machine) == "bow-2000") {
      CHECK(t.time_s >= 2.0 * (k.replicas - 1) / k.replicas * static_cast<double>(k.bytes) / slowest_link_bytes_per_s * 0.99);
    }
  }
}

TEST_CASE("lockstep pipeline schedules run every forward and backward once, in dependency order", "[unit]") {
  for (auto schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
    for (std::int32_t S : {1, 2, 4}) {
      for (std::int64_t M : {1, 2, 4, 8}) {
        const LockstepSchedule l = lockstep_schedule(S, M, schedule);
        INFO(to_string(schedule) << " S=" << S << " M=" << M);
        std::vector<std::vector<std::int64_t>> f(S, std::vector<std::int64_t>(M, -1)), b = f;
        for (std::size_t t = 0; t < l.cycles.size(); ++t) {
          for (std::int32_t s = 0; s < S; ++s) {
            const auto fm = l.cycles[t].forward[static_cast<std::size_t>(s)];
            const auto bm = l.cycles[t].backward[static_cast<std::size_t>(s)];
            if (fm >= 0) f[s][fm] = static_cast<std::int64_t>(t);
            if (bm >= 0) b[s][bm] = static_cast<std::int64_t>(t);
          }
        }
        bool ordered = true;
        for (std::int32_t s = 0; s < S; ++s) {
          for (std::int64_t m = 0; m < M; ++m) {
            if (f[s][m] < 0 || b[s][m] < 0 || b[s][m] <= f[s][m]) ordered = false;
            if (s > 0 && f[s][m] <= f[s - 1][m]) ordered = false;
            if (s + 1 < S && b[s][m] <= b[s + 1][m]) ordered = false;
          }
        }
        CHECK(ordered);
        const LockstepSchedule forwards_only = lockstep_schedule(S, M, schedule, false);
        CHECK(static_cast<std::int64_t>(forwards_only.cycles.size()) == M + S - 1);
        if (schedule == PipelineSchedule::gpipe) {
          CHECK(static_cast<std::int64_t>(l.cycles.size()) == 2 * (M + S - 1));
          CHECK(l.peak_in_flight.front() == M);
        } else {
          for (std::int32_t s = 0; s < S; ++s) CHECK(l.peak_in_flight[static_cast<std::size_t>(s)] == std::min<std::int64_t>(M, S - s));
        }
      }
    }
  }
}

TEST_CASE("a simulated GPipe step of equal stages agrees with (M + S - 1)(f + b) and its transfers within 5%", "[formula]") {
  const IpuMachine system = load_ipu_machine("bow-2000");
  // Two stages, one boundary: every pipeline cycle's transfer is the same, so the closed form is exact.
  double previous_bubble_share = 1;
  for (std::int64_t M : {1, 2, 4, 8}) {
    const PipelineTiming t = simulate_pipeline(system, 0, {200e-6, 200e-6}, {400e-6, 400e-6}, {2 << 20}, M,
                                               PipelineSchedule::gpipe);
    INFO("M=" << M << ": simulated " << t.time_s << " s, closed form " << t.closed_form_s << " s");
    CHECK(relative_difference(t.time_s, t.closed_form_s) < 0.05);
    CHECK(t.time_s >= static_cast<double>(M + 1) * 600e-6);
    // The bubble's share falls as micro-batches grow, and is at least (S - 1) / (M + S - 1).
    const double share = t.bubble_s / t.time_s;
    CHECK(share < previous_bubble_share);
    CHECK(share >= 1.0 / static_cast<double>(M + 1) - 1e-9);
    previous_bubble_share = share;
  }
  // Four stages over the ladder's pair and cross-rung groups: the boundaries' transfers differ, and the
  // closed form (the slowest transfer in every cycle) bounds the simulation from above, as the compute
  // alone does from below.
  const std::vector<double> forward(4, 200e-6), backward(4, 400e-6);
  const std::vector<std::int64_t> boundary(3, 2 << 20);
  for (std::int64_t M : {1, 8}) {
    const PipelineTiming t = simulate_pipeline(system, 0, forward, backward, boundary, M, PipelineSchedule::gpipe);
    INFO("M=" << M << ": simulated " << t.time_s << " s, closed form " << t.closed_form_s << " s");
    CHECK(t.time_s <= t.closed_form_s);
    CHECK(t.time_s >= static_cast<double>(M + 3) * 600e-6);
  }
  // 1F1B keeps fewer micro-batches' activations than GPipe's M, in no more pipeline time than GPipe's
  // plus the one-cycle stagger of its backwards.
  const PipelineTiming g = simulate_pipeline(system, 0, forward, backward, boundary, 8, PipelineSchedule::gpipe);
  const PipelineTiming o = simulate_pipeline(system, 0, forward, backward, boundary, 8, PipelineSchedule::one_f_one_b);
  INFO("gpipe " << g.time_s << " s, 1f1b " << o.time_s << " s");
  CHECK(o.peak_in_flight.front() < g.peak_in_flight.front());
  CHECK(o.time_s > 0);
  // An inference pipeline: the forwards alone, M + S - 1 cycles, as its closed form says.
  const PipelineTiming i = simulate_pipeline(system, 0, {200e-6, 200e-6}, {}, {2 << 20}, 4, PipelineSchedule::gpipe);
  INFO("inference: simulated " << i.time_s << " s, closed form " << i.closed_form_s << " s");
  CHECK(relative_difference(i.time_s, i.closed_form_s) < 0.05);
  CHECK(i.time_s >= 5 * 200e-6);
  CHECK(i.time_s < g.time_s);
  CHECK(i.peak_in_flight == std::vector<std::int64_t>{1, 1});
}
