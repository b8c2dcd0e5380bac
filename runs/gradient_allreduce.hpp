#pragma once
// The all-reduce of a training step's gradients as its "parallel" section asks for it: one collective of
// everything (merged), or one collective per trained parameter tensor, as PopART runs them unless its
// replicatedCollectivesSettings.mergeAllReduceCollectives is set (docs/workload-format.md, "Parallel").
#include <cstdint>
#include <vector>

#include "analysis/stage_split.hpp"
#include "backends/system_view.hpp"
#include "workloads/parallel/parallel_spec.hpp"

namespace tilesim::runs {

// Merged: the system's all-reduce of each stage's gradient bytes, once. Per tensor: the k-th gradient of
// every stage at once (a stage with fewer tensors sends nothing), one collective after another; the
// times add, so each collective pays its fixed steps. Collectives of equal sizes are timed once. The
// detail says which it was, how many collectives ran and each distinct size's count and time.
backends::LinkTime gradient_allreduce(const backends::SystemView& view, const std::vector<analysis::StageMemory>& memory,
                                      std::int64_t ranks, const workloads::parallel::ParallelSpec& spec);

}  // namespace tilesim::runs
