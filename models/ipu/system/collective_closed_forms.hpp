#pragma once
// The closed forms of the IPU system's collectives and pipelines, from the machine file's figures alone:
// what a textbook cost model says the simulated programs (system_collectives.hpp) take, for checking
// one against the other (they agree within 5% where the form is exact: every member of a ring moving
// equal pieces, a pipeline of equal stages).
#include <cstdint>
#include <vector>

#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/system/system_collectives.hpp"

namespace tilesim::ipu {

// One ring phase (a reduce-scatter or an all-gather) of `rings` rings of R members, each member holding
// `elements_per_ipu` float32 elements of the data being reduced, at most `tile_elements` on a tile, moved
// in steps of D/R (exact when every tile's share splits evenly into R pieces):
//   (R - 1) x (sync + exchange_fixed + max(piece / exchange rate, piece bytes of an IPU x sharing / link
//   rate + route latency) + per-region cost)  [+ (R - 1) x (compute_fixed + one piece's sum) for a
//   reduce-scatter]
// where `sharing` is how many of the step's ring hops cross the busiest link group of a hop's route.
sim::Cycles ring_phase_closed_form_cycles(const IpuMachine& system, const std::vector<std::vector<std::int32_t>>& rings,
                                          std::int64_t elements_per_ipu, std::int64_t tile_elements, bool reduce_scatter);

// The all-reduce of `elements_per_ipu` float32 elements on each IPU of its replicas, by `plan`: the sum of
// its ring phases (ring: reduce-scatter + all-gather over the outer rings; hierarchical: inner
// reduce-scatter of D, outer reduce-scatter and all-gather of D / inner_size, inner all-gather of D).
sim::Cycles allreduce_closed_form_cycles(const IpuMachine& system, std::int64_t elements_per_ipu, const AllreducePlan& plan);

// A GPipe step of M micro-batches over S stages (IPUs first_ipu ..): (M + S - 1) pipeline cycles each way,
// each the slowest stage's compute plus a sync and (but for the last) the largest boundary's transfer:
//   (M + S - 1) (max f + max b) + 2 (M + S - 1) (compute_fixed + sync) + 2 (M + S - 2) x (global sync +
//   exchange_fixed + max(boundary tile bytes / exchange rate, boundary bytes / link rate + latency))
// Exact for equal stages under "gpipe"; "1f1b" runs a forward and a backward in one cycle and is not.
// Without `training` (an inference pipeline) the forward way alone.
sim::Cycles pipeline_closed_form_cycles(const IpuMachine& system, std::int32_t first_ipu,
                                        const std::vector<sim::Cycles>& forward_cycles,
                                        const std::vector<sim::Cycles>& backward_cycles,
                                        const std::vector<std::int64_t>& boundary_bytes, std::int64_t micro_batches,
                                        bool training = true);

}  // namespace tilesim::ipu
