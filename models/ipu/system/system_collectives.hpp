#pragma once
// Collectives and pipelines on a simulated IPU system, run on the engine as supersteps whose exchanges
// cross chips over the modelled IPU-Links and gateway links (sim::MachineConfig::links), beside the closed
// form each one has. The compute a replica or a pipeline stage does is simulated separately, on the
// replica's own IPUs (ipu_subsystem); these programs carry the traffic between chips and the sums.
#include <cstdint>
#include <vector>

#include "models/ipu/machine/machine_file.hpp"
#include "sim/program.hpp"
#include "sim/stats.hpp"
#include "ir/parallelism.hpp"

namespace tilesim::ipu {

struct CollectiveTiming {
  double time_s = 0;         // simulated
  sim::Cycles cycles = 0;
  double closed_form_s = 0;  // the closed form of the same algorithm on the same links (modeled)
  sim::RunStats stats;       // the engine's run
};

// How an all-reduce runs: rings of IPUs, each a list in ring order. "ring": one ring per IPU position of a
// replica (replica r's i-th IPU is r k + i), over the replicas in an order whose neighbours one link group
// joins where replicas are single IPUs (hamiltonian_ring). "hierarchical" (a system of several machines,
// replicas within a machine): a reduce-scatter over the replicas inside each machine (inner rings), a ring
// all-reduce of each IPU's reduced piece across the machines (outer rings: the IPUs at the same place of
// every machine), an all-gather inside each machine. A system of one machine runs "ring" for either.
struct AllreducePlan {
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::ring;
  std::int32_t replicas = 1;
  std::int32_t ipus_per_replica = 1;
  std::vector<std::vector<std::int32_t>> outer_rings;
  std::vector<std::vector<std::int32_t>> inner_rings;  // hierarchical only
  std::int32_t inner_size = 1;                         // members of each inner ring
};
AllreducePlan plan_allreduce(const IpuMachine& system, std::int32_t replicas,
                             AllreduceAlgorithm algorithm);

class RingCollectiveBuilder;
// The plan's program on `builder` (made for the per-IPU element count).
sim::Program allreduce_program(const IpuMachine& system, std::int64_t bytes, const AllreducePlan& plan,
                               RingCollectiveBuilder& builder);

// The all-reduce (sum) of `bytes` of gradients held by each of `replicas` replicas, replica r on IPUs
// [r k, (r+1) k) of `system` with k = num_ipus / replicas (each replica's gradients spread over its k IPUs'
// tiles). `replicas` must divide the system's IPUs. One replica costs nothing.
CollectiveTiming simulate_allreduce(const IpuMachine& system, std::int64_t bytes, std::int32_t replicas,
                                    AllreduceAlgorithm algorithm);

struct PipelineTiming {
  double time_s = 0;         // simulated: every pipeline cycle a superstep (stages compute, then pass on)
  double bubble_s = 0;       // time_s minus the busiest stage's own compute
  double closed_form_s = 0;  // (M + S - 1) x (slowest stage + its transfer), per direction (modeled)
  std::vector<double> stage_busy_s;  // each stage's compute over the step
  std::vector<std::int64_t> peak_in_flight;  // per stage: most micro-batches' activations held at once
  sim::RunStats stats;
};

// A pipelined step of `micro_batches` micro-batches over stages on consecutive IPUs [first_ipu, first_ipu + S)
// of `system`: stage s computes a micro-batch's forward in stage_forward_s[s] and its backward in
// stage_backward_s[s] (each simulated on one IPU beforehand), and passes boundary_bytes[s] of activations
// forward (and as many gradient bytes back) to stage s + 1. Like Graphcore's pipelines, the stages run in
// lockstep: each pipeline cycle is a compute phase on every busy stage and an exchange between stages.
// An empty stage_backward_s is an inference pipeline: forwards only.
PipelineTiming simulate_pipeline(const IpuMachine& system, std::int32_t first_ipu,
                                 const std::vector<double>& stage_forward_s, const std::vector<double>& stage_backward_s,
                                 const std::vector<std::int64_t>& boundary_bytes, std::int64_t micro_batches,
                                 PipelineSchedule schedule);

// The first `num_ipus` IPUs of `system` as a system of their own (a replica's or a stage's machine): one
// IPU gives the chip alone; more keep the system's links among them. Throws InputError when num_ipus
// does not divide the system's IPUs.
IpuMachine ipu_subsystem(const IpuMachine& system, std::int32_t num_ipus);

}  // namespace tilesim::ipu
