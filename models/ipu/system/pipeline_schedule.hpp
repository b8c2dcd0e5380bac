#pragma once
// The lockstep schedule of a pipelined step on an IPU system: the stages run bulk-synchronously, so time
// advances in pipeline cycles, and in each cycle a stage runs at most one micro-batch's forward and one's
// backward (in that cycle's compute phase), then passes the results to its neighbours (its exchange).
// Pure: which stage does what in which cycle; system_collectives.cpp turns it into an engine program.
#include <cstdint>
#include <vector>

#include "ir/parallelism.hpp"

namespace tilesim::ipu {

struct PipelineCycle {
  std::vector<std::int64_t> forward;   // per stage: the micro-batch whose forward it runs, or -1
  std::vector<std::int64_t> backward;  // per stage: the micro-batch whose backward it runs, or -1
};

struct LockstepSchedule {
  std::vector<PipelineCycle> cycles;
  std::vector<std::int64_t> peak_in_flight;  // per stage: most micro-batches whose activations it holds at once
};

// Stage s may run micro-batch m's forward once stage s - 1 ran it in an earlier cycle, and its backward once
// its own forward and stage s + 1's backward of m ran in earlier cycles. "gpipe" starts the backwards only
// when the last stage has run every forward (a flush); "1f1b" lets stage s hold at most S - s micro-batches'
// activations (a backward in the same cycle frees its slot first). Micro-batches go in order 0..M-1.
// Without `backward` (an inference pipeline) the stages run forwards only, M + S - 1 cycles.
LockstepSchedule lockstep_schedule(std::int32_t stages, std::int64_t micro_batches,
                                   PipelineSchedule schedule, bool backward = true);

}  // namespace tilesim::ipu
