#include "models/system/pipeline_schedule.hpp"

#include <algorithm>
#include <stdexcept>

namespace tilesim::system {

namespace {

struct Step {
  bool backward = false;
  std::int64_t micro_batch = 0;
};

// The order in which stage s of S runs its micro-batches' forwards and backwards.
std::vector<Step> stage_order(std::int64_t s, std::int64_t S, std::int64_t M, bool training, PipelineSchedule schedule) {
  std::vector<Step> order;
  if (!training || schedule == PipelineSchedule::gpipe) {
    for (std::int64_t m = 0; m < M; ++m) order.push_back({false, m});
    if (training)
      for (std::int64_t m = 0; m < M; ++m) order.push_back({true, m});
    return order;
  }
  // 1F1B (PipeDream-Flush): warm-up forwards fill the stages below; then each forward is followed by
  // the oldest backward, so a stage holds at most S - s micro-batches' activations.
  const std::int64_t warm_up = std::min(S - s - 1, M);
  for (std::int64_t m = 0; m < warm_up; ++m) order.push_back({false, m});
  for (std::int64_t i = 0; i < M - warm_up; ++i) {
    order.push_back({false, warm_up + i});
    order.push_back({true, i});
  }
  for (std::int64_t m = M - warm_up; m < M; ++m) order.push_back({true, m});
  return order;
}

}  // namespace

PipelineTimeline schedule_pipeline(const PipelineStages& p) {
  const auto S = static_cast<std::int64_t>(p.forward_s.size());
  const std::int64_t M = p.micro_batches;
  const bool training = !p.backward_s.empty();
  if (S < 1 || M < 1) throw std::invalid_argument("schedule_pipeline: at least one stage and one micro-batch expected");
  if ((training && static_cast<std::int64_t>(p.backward_s.size()) != S) || static_cast<std::int64_t>(p.transfer_s.size()) != S - 1)
    throw std::invalid_argument("schedule_pipeline: one forward (and backward) time per stage and S - 1 transfers expected");
  for (const auto* v : {&p.forward_s, &p.backward_s, &p.transfer_s})
    for (double t : *v)
      if (!(t >= 0)) throw std::invalid_argument("schedule_pipeline: times must be >= 0");

  const auto at = [M](std::int64_t s, std::int64_t m) { return static_cast<std::size_t>(s * M + m); };
  constexpr double unknown = -1;
  std::vector<double> forward_end(static_cast<std::size_t>(S * M), unknown), backward_end(forward_end);
  std::vector<std::vector<Step>> orders;
  for (std::int64_t s = 0; s < S; ++s) orders.push_back(stage_order(s, S, M, training, p.schedule));
  std::vector<std::size_t> next(static_cast<std::size_t>(S), 0);
  std::vector<double> free_at(static_cast<std::size_t>(S), 0);

  PipelineTimeline t;
  t.peak_in_flight.assign(static_cast<std::size_t>(S), training ? 0 : 1);
  std::vector<std::int64_t> in_flight(static_cast<std::size_t>(S), 0);
  // Each pass runs every device's next step whose inputs are ready; the schedules above never deadlock,
  // so each pass runs at least one step.
  for (bool progressed = true; progressed;) {
    progressed = false;
    for (std::int64_t s = 0; s < S; ++s) {
      const auto su = static_cast<std::size_t>(s);
      while (next[su] < orders[su].size()) {
        const Step step = orders[su][next[su]];
        double ready = 0;
        if (!step.backward) {
          if (s > 0) {
            const double before = forward_end[at(s - 1, step.micro_batch)];
            if (before == unknown) break;
            ready = before + p.transfer_s[su - 1];
          }
        } else if (s + 1 < S) {
          const double after = backward_end[at(s + 1, step.micro_batch)];
          if (after == unknown) break;
          ready = after + p.transfer_s[su];
        } else {
          ready = forward_end[at(s, step.micro_batch)];  // run earlier on this device
        }
        const double start = std::max(ready, free_at[su]);
        const double end = start + (step.backward ? p.backward_s[su] : p.forward_s[su]);
        (step.backward ? backward_end : forward_end)[at(s, step.micro_batch)] = end;
        free_at[su] = end;
        t.makespan_s = std::max(t.makespan_s, end);
        if (training) {
          in_flight[su] += step.backward ? -1 : 1;
          t.peak_in_flight[su] = std::max(t.peak_in_flight[su], in_flight[su]);
        }
        ++next[su];
        progressed = true;
      }
    }
  }
  for (std::int64_t s = 0; s < S; ++s)
    if (next[static_cast<std::size_t>(s)] < orders[static_cast<std::size_t>(s)].size())
      throw std::logic_error("schedule_pipeline: the schedule deadlocked");

  for (std::int64_t s = 0; s < S; ++s) {
    const auto su = static_cast<std::size_t>(s);
    const double busy = static_cast<double>(M) * (p.forward_s[su] + (training ? p.backward_s[su] : 0.0));
    t.stage_busy_s.push_back(busy);
    t.busiest_stage_s = std::max(t.busiest_stage_s, busy);
  }
  t.bubble_s = t.makespan_s - t.busiest_stage_s;
  t.bubble_share = t.makespan_s > 0 ? t.bubble_s / t.makespan_s : 0;
  return t;
}

double equal_stage_pipeline_s(std::int64_t stages, std::int64_t micro_batches, double forward_s, double backward_s) {
  return static_cast<double>(micro_batches + stages - 1) * (forward_s + backward_s);
}

double accumulated_step_s(double micro_step_s, std::int64_t micro_steps, double optimizer_s, double allreduce_s) {
  if (micro_steps < 1) throw std::invalid_argument("accumulated_step_s: at least one micro-step expected");
  return static_cast<double>(micro_steps) * micro_step_s + optimizer_s + allreduce_s;
}

}  // namespace tilesim::system
