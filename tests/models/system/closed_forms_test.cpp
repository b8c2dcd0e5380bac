// The closed forms of multi-device systems (models/system/) against hand-computed values: ring and
// hierarchical all-reduce over a two-level link hierarchy, the pipeline schedule's event simulation
// (GPipe and 1F1B, equal and unequal stages, with transfers) and gradient accumulation.
#include <catch2/catch.hpp>

#include "models/system/allreduce.hpp"
#include "models/system/pipeline_schedule.hpp"

using namespace tilesim::system;
using tilesim::AllreduceAlgorithm;
using tilesim::PipelineSchedule;

TEST_CASE("ring all-reduce: 2 (R-1)/R x bytes / bandwidth + 2 (R-1) x latency", "[system][formula]") {
  const LinkLevel link{100e9, 1e-6};
  // 2 x 3/4 x 1e9 / 1e11 = 0.015 s, plus 6 steps of 1 us.
  CHECK(ring_allreduce_s(1e9, 4, link) == Approx(0.015006));
  CHECK(ring_reduce_scatter_s(1e9, 4, link) == Approx(0.007503));
  CHECK(ring_allreduce_s(1e9, 1, link) == 0);
  // Twice the ranks: nearly the same bandwidth term, twice the steps.
  CHECK(ring_allreduce_s(1e9, 8, link) == Approx(2.0 * 7 / 8 * 1e-2 + 14e-6));
  CHECK_THROWS(ring_allreduce_s(1e9, 2, LinkLevel{0, 0}));
}

TEST_CASE("hierarchical all-reduce: reduce-scatter inside, ring of shards across, all-gather inside", "[system][formula]") {
  // 4 machines of 4 ranks; 800 MB of gradients per rank.
  const LinkHierarchy links{4, 4, LinkLevel{50e9, 1e-6}, LinkLevel{10e9, 5e-6}};
  // Inside: 3/4 x 8e8 / 5e10 + 3 x 1e-6 = 0.012003 s, twice; across: 2 x 3/4 x 2e8 / 1e10 + 6 x 5e-6 = 0.03003 s.
  CHECK(hierarchical_allreduce_s(8e8, links) == Approx(0.054036));
  CHECK(allreduce_s(AllreduceAlgorithm::hierarchical, 8e8, links) == Approx(0.054036));
  // One ring over all 16 ranks runs at the between-machine link: 2 x 15/16 x 8e8 / 1e10 + 30 x 5e-6.
  CHECK(flat_ring_allreduce_s(8e8, links) == Approx(0.15015));
  CHECK(allreduce_s(AllreduceAlgorithm::ring, 8e8, links) == Approx(0.15015));
  // One machine: both are the ring inside it.
  const LinkHierarchy one{4, 1, LinkLevel{50e9, 1e-6}, LinkLevel{10e9, 5e-6}};
  CHECK(hierarchical_allreduce_s(8e8, one) == Approx(ring_allreduce_s(8e8, 4, one.inside)));
  CHECK(flat_ring_allreduce_s(8e8, one) == Approx(ring_allreduce_s(8e8, 4, one.inside)));
  // One rank per machine: both are the ring across machines.
  const LinkHierarchy nodes{1, 8, LinkLevel{50e9, 1e-6}, LinkLevel{25e9, 2e-6}};
  CHECK(hierarchical_allreduce_s(1e8, nodes) == Approx(2.0 * 7 / 8 * 1e8 / 25e9 + 14 * 2e-6));
  CHECK(flat_ring_allreduce_s(1e8, nodes) == Approx(hierarchical_allreduce_s(1e8, nodes)));
}

TEST_CASE("pipeline: equal stages without transfers take exactly (M + S - 1)(f + b)", "[system][formula]") {
  for (const auto schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
    for (std::int64_t S : {1, 2, 4}) {
      for (std::int64_t M : {1, 2, 4, 8}) {
        INFO("schedule " << tilesim::to_string(schedule) << ", S " << S << ", M " << M);
        PipelineStages p;
        p.forward_s.assign(static_cast<std::size_t>(S), 1.0);
        p.backward_s.assign(static_cast<std::size_t>(S), 2.0);
        p.transfer_s.assign(static_cast<std::size_t>(S - 1), 0.0);
        p.micro_batches = M;
        p.schedule = schedule;
        const PipelineTimeline t = schedule_pipeline(p);
        CHECK(t.makespan_s == Approx(equal_stage_pipeline_s(S, M, 1.0, 2.0)));
        CHECK(t.makespan_s == Approx(static_cast<double>(M + S - 1) * 3.0));
        CHECK(t.bubble_share == Approx(static_cast<double>(S - 1) / static_cast<double>(M + S - 1)));
        CHECK(t.busiest_stage_s == Approx(3.0 * static_cast<double>(M)));
        for (std::int64_t s = 0; s < S; ++s) {
          const std::int64_t expected = schedule == PipelineSchedule::gpipe ? M : std::min(S - s, M);
          CHECK(t.peak_in_flight[static_cast<std::size_t>(s)] == expected);
        }
      }
    }
  }
}

TEST_CASE("pipeline: unequal stages with transfers, step by step", "[system][formula]") {
  // Stage 0 forward 1, stage 1 forward 2, backwards 1, a 0.5 s transfer each way; two micro-batches.
  // GPipe: stage 1 runs F0 1.5-3.5, F1 3.5-5.5, B0 5.5-6.5, B1 6.5-7.5; stage 0 B0 7-8, B1 8-9.
  PipelineStages p;
  p.forward_s = {1, 2};
  p.backward_s = {1, 1};
  p.transfer_s = {0.5};
  p.micro_batches = 2;
  const PipelineTimeline g = schedule_pipeline(p);
  CHECK(g.makespan_s == Approx(9));
  CHECK(g.stage_busy_s[0] == Approx(4));
  CHECK(g.stage_busy_s[1] == Approx(6));
  CHECK(g.bubble_s == Approx(3));
  CHECK(g.bubble_share == Approx(1.0 / 3));
  CHECK(g.peak_in_flight == std::vector<std::int64_t>{2, 2});
  // 1F1B: stage 1 runs F0 1.5-3.5, B0 3.5-4.5, F1 4.5-6.5, B1 6.5-7.5; stage 0 B0 5-6, B1 8-9.
  p.schedule = PipelineSchedule::one_f_one_b;
  const PipelineTimeline o = schedule_pipeline(p);
  CHECK(o.makespan_s == Approx(9));
  CHECK(o.peak_in_flight == std::vector<std::int64_t>{2, 1});
  // One micro-batch: every forward, then every backward, with both transfers each way.
  p.micro_batches = 1;
  CHECK(schedule_pipeline(p).makespan_s == Approx(1 + 2 + 1 + 1 + 2 * 0.5));
}

TEST_CASE("pipeline: inference runs forwards only and keeps one micro-batch per stage", "[system][formula]") {
  PipelineStages p;
  p.forward_s = {1, 1};
  p.transfer_s = {0};
  p.micro_batches = 3;
  const PipelineTimeline t = schedule_pipeline(p);
  CHECK(t.makespan_s == Approx(4));
  CHECK(t.bubble_share == Approx(0.25));
  CHECK(t.peak_in_flight == std::vector<std::int64_t>{1, 1});
  PipelineStages bad = p;
  bad.transfer_s = {};
  CHECK_THROWS(schedule_pipeline(bad));
  bad = p;
  bad.micro_batches = 0;
  CHECK_THROWS(schedule_pipeline(bad));
}

TEST_CASE("gradient accumulation: A micro-steps, then one all-reduce and one update", "[system][formula]") {
  CHECK(accumulated_step_s(0.1, 4, 0.02, 0.05) == Approx(0.47));
  CHECK(accumulated_step_s(0.1, 1, 0, 0) == Approx(0.1));
  CHECK_THROWS(accumulated_step_s(0.1, 0, 0, 0));
}
