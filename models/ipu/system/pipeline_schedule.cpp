#include "models/ipu/system/pipeline_schedule.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace tilesim::ipu {

LockstepSchedule lockstep_schedule(std::int32_t stages, std::int64_t micro_batches,
                                   PipelineSchedule schedule, bool backward) {
  if (stages < 1 || micro_batches < 1) {
    throw std::logic_error("lockstep_schedule: needs at least one stage and one micro-batch, has " +
                           std::to_string(stages) + " and " + std::to_string(micro_batches));
  }
  const auto S = static_cast<std::size_t>(stages);
  const std::int64_t M = micro_batches;
  constexpr std::int64_t not_yet = -1;
  // The cycle in which stage s ran micro-batch m's forward / backward (not_yet: not yet).
  std::vector<std::vector<std::int64_t>> forward_at(S, std::vector<std::int64_t>(static_cast<std::size_t>(M), not_yet));
  std::vector<std::vector<std::int64_t>> backward_at = forward_at;
  std::vector<std::int64_t> forwards(S, 0), backwards(S, 0);
  LockstepSchedule out;
  out.peak_in_flight.assign(S, 0);
  const bool gpipe = schedule == PipelineSchedule::gpipe;
  auto done_before = [](std::int64_t at, std::int64_t cycle) { return at != not_yet && at < cycle; };

  auto finished = [&] { return backward ? backwards[0] == M : forwards[S - 1] == M; };
  for (std::int64_t t = 0; !finished(); ++t) {
    if (t > 4 * (M + static_cast<std::int64_t>(S)) + 8) throw std::logic_error("lockstep_schedule: no progress");
    PipelineCycle cycle;
    cycle.forward.assign(S, -1);
    cycle.backward.assign(S, -1);
    const bool flushed = done_before(forward_at[S - 1][static_cast<std::size_t>(M - 1)], t);
    for (std::size_t s = 0; s < S; ++s) {
      // The backward first: it frees its micro-batch's activations for a forward in the same cycle.
      const std::int64_t held_before = forwards[s] - backwards[s];
      const std::int64_t b = backwards[s];
      if (backward && b < M && done_before(forward_at[s][static_cast<std::size_t>(b)], t) &&
          (s + 1 == S || done_before(backward_at[s + 1][static_cast<std::size_t>(b)], t)) && (!gpipe || flushed)) {
        cycle.backward[s] = b;
        backward_at[s][static_cast<std::size_t>(b)] = t;
        ++backwards[s];
      }
      const std::int64_t f = forwards[s];
      const std::int64_t limit = gpipe || !backward ? M : static_cast<std::int64_t>(S - s);
      if (f < M && (s == 0 || done_before(forward_at[s - 1][static_cast<std::size_t>(f)], t)) &&
          forwards[s] - backwards[s] < limit) {
        cycle.forward[s] = f;
        forward_at[s][static_cast<std::size_t>(f)] = t;
        ++forwards[s];
      }
      // Activations held: forwards run whose backward has not run, before this cycle's backward frees one
      // and after its forward adds one (the backward runs first). An inference stage holds only the
      // micro-batch it works on.
      out.peak_in_flight[s] = backward ? std::max({out.peak_in_flight[s], held_before, forwards[s] - backwards[s]})
                                       : std::max<std::int64_t>(out.peak_in_flight[s], cycle.forward[s] >= 0 ? 1 : 0);
    }
    out.cycles.push_back(std::move(cycle));
  }
  return out;
}

}  // namespace tilesim::ipu
