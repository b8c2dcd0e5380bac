#pragma once
// A pipelined step by a small event simulation of its schedule: S stages on S devices, each device
// running one micro-batch's forward or backward of its stage at a time, in the order the schedule gives
// it (GPipe: every forward, then every backward; 1F1B: S - s - 1 warm-up forwards, then one forward and
// one backward in turn, then the remaining backwards). A micro-batch's forward on stage s starts once its
// forward on stage s - 1 has finished and its activations have crossed the link (transfer_s[s - 1]); its
// backward on stage s once its backward on stage s + 1 has finished and the gradients have crossed back
// (the last stage's backward follows its own forward). Exact for the schedule, unequal stages included;
// with S equal stages of f and b and no transfers the makespan is (M + S - 1)(f + b).
#include <cstdint>
#include <vector>

#include "ir/parallelism.hpp"

namespace tilesim::system {

struct PipelineStages {
  std::vector<double> forward_s;   // per stage: one micro-batch's forward
  std::vector<double> backward_s;  // per stage: one micro-batch's backward; empty for inference (forwards only)
  std::vector<double> transfer_s;  // S - 1 entries: between stage s and s + 1, each direction
  std::int64_t micro_batches = 1;
  PipelineSchedule schedule = PipelineSchedule::gpipe;
};

struct PipelineTimeline {
  double makespan_s = 0;                // the first forward's start to the last op's end
  std::vector<double> stage_busy_s;     // per stage: M x (f + b)
  double busiest_stage_s = 0;           // the largest stage_busy_s
  double bubble_s = 0;                  // makespan minus the busiest stage's work: idle time it waits
  double bubble_share = 0;              // bubble_s / makespan_s
  // Per stage: the most micro-batches whose activations it holds at once (forward done, backward not
  // yet): M for GPipe, min(S - s, M) for 1F1B; 1 for inference (nothing is kept for a backward).
  std::vector<std::int64_t> peak_in_flight;
};

// Throws std::invalid_argument for an empty or inconsistent description (sizes, negative times, M < 1).
PipelineTimeline schedule_pipeline(const PipelineStages& stages);

// The closed form of equal stages without transfers: (M + S - 1) x (f + b).
double equal_stage_pipeline_s(std::int64_t stages, std::int64_t micro_batches, double forward_s, double backward_s);

// Gradient accumulation: A micro-steps of a replica (forward, loss and backward each), then one
// all-reduce and one optimizer update: A x micro_step_s + optimizer_s + allreduce_s.
double accumulated_step_s(double micro_step_s, std::int64_t micro_steps, double optimizer_s, double allreduce_s);

}  // namespace tilesim::system
