#include "backends/system_view.hpp"

#include "backends/backend_family.hpp"
#include "common/error.hpp"
#include "models/system/pipeline_schedule.hpp"

namespace tilesim::backends {

// The family's own view (BackendFamily::system_view): one file per family's system
// (ipu_system_view.cpp, gpu_system_view.cpp, cpu_cluster_view.cpp).
std::unique_ptr<SystemView> system_view(const BackendSpec& spec) { return spec.descriptor->system_view(spec); }

PipelineTime modeled_pipeline(const PipelineWork& work, const std::vector<double>& transfer_s) {
  system::PipelineStages stages;
  stages.forward_s = work.forward_s;
  stages.backward_s = work.backward_s;
  stages.transfer_s = transfer_s;
  stages.micro_batches = work.micro_batches;
  stages.schedule = work.schedule;
  const system::PipelineTimeline t = system::schedule_pipeline(stages);
  PipelineTime p;
  p.makespan_s = t.makespan_s;
  p.busiest_stage_s = t.busiest_stage_s;
  p.bubble_s = t.bubble_s;
  p.bubble_share = t.bubble_share;
  p.stage_busy_s = t.stage_busy_s;
  p.peak_in_flight = t.peak_in_flight;
  p.kind = ResultKind::modeled;
  // Beside the event simulation, the closed form of equal stages at the slowest stage (and its transfer):
  // exact when the stages are equal and the links free; otherwise an upper bound of the simulation's order.
  double slowest = 0, slowest_transfer = 0;
  for (std::size_t s = 0; s < work.forward_s.size(); ++s)
    slowest = std::max(slowest, work.forward_s[s] + (work.backward_s.empty() ? 0.0 : work.backward_s[s]));
  for (double t_s : transfer_s) slowest_transfer = std::max(slowest_transfer, t_s);
  const std::int64_t S = static_cast<std::int64_t>(work.forward_s.size());
  p.closed_form_s = system::equal_stage_pipeline_s(S, work.micro_batches, slowest, 0) +
                    static_cast<double>(S - 1) * slowest_transfer * (work.backward_s.empty() ? 1.0 : 2.0);
  p.closed_form = "(M + S - 1) x (slowest stage's f + b) + (S - 1) x the slowest transfer, each way";
  p.detail = {{"transfer_s", transfer_s}, {"how", "event simulation of the schedule (models/system/pipeline_schedule.hpp)"}};
  return p;
}

}  // namespace tilesim::backends
