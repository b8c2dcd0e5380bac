// Timing-only sweep points per second: the shipped hydronet grid (workloads/sweeps/hydronet.json,
// 1,188 gather and scatter_add points on the simulated Bow), every 4th point, each planned, built,
// compiled and run as a sweep point runs it, with its phases laid end to end from the compiled costs
// (the default, sim/phase_sequence.hpp) and through the SystemC kernel (the path before it), in one
// run so that both sides share the host's load. The counter `points_per_s` is the figure the sweep's
// summary prints; `heap reuse` is on in both (common/heap_reuse.hpp), as `tilesim sweep` runs.
//
// A third case builds each program as a functional run does, its transfers listed with their buffers
// and offsets, and runs it timing-only: the path before timing-only programs counted their transfers
// (sim::TransferCount, sim::BroadcastCount), which gives the same cycles.
//
// On the 2-core development host (AMD EPYC), the whole grid through `tilesim sweep
// workloads/sweeps/hydronet.json --backends ipu:bow --jobs 1`: 10.6 s before the phases were laid end
// to end, 3.7-4.4 s after, 2.6-2.7 s with counted transfers, 1.1-1.6 s with the per-tile band sums,
// inline vertex lists, counted (not sorted) lookups and far fewer heap blocks (2.9-3.1 s for the
// revision before them, run alternately); identical cycles at every point. This benchmark's quarter
// grid: 700 -> 274-305 ms for the default path, 1,051 -> 857-921 ms for the listed-transfer path.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "common/heap_reuse.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "models/ipu/planning/plan.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "workloads/random_streams.hpp"
#include "workloads/sweep_spec.hpp"

using namespace tilesim;

namespace {

struct GridPoint {
  OpGraph graph;
  std::vector<std::int32_t> indices;
};

const std::vector<GridPoint>& hydronet_grid_sample() {
  static const std::vector<GridPoint> points = [] {
    const analysis::SweepSpec spec = analysis::load_sweep(std::string(TILESIM_SOURCE_DIR) + "/workloads/sweeps/hydronet.json");
    std::vector<GridPoint> out;
    std::size_t k = 0;
    for (const analysis::SweepPoint& p : analysis::expand_sweep(spec)) {
      if (spec.backends[p.backend].name != "ipu:bow" || k++ % 4 != 0) continue;
      GridPoint g;
      g.graph.add_gather_scatter(p.op, *op_kind_from_string(p.op), DType::float32, p.shape);
      const Op& op = g.graph.ops.front();
      std::mt19937_64 engine(analysis::sweep_index_seed(p.shape, spec.seed, p.repeat));
      g.indices = workloads::streams::uniform_indices(engine, op.num_indices(), op.index_range());
      out.push_back(std::move(g));
    }
    return out;
  }();
  return points;
}

const ipu::IpuMachine& bow_machine() {
  static const ipu::IpuMachine m = ipu::load_ipu_machine("bow");
  return m;
}

// The op's program built as a functional run builds it (every transfer listed), run timing-only.
sim::Cycles listed_transfer_cycles(const GridPoint& p) {
  const Op& op = p.graph.ops.front();
  const ipu::OpPlan plan = ipu::plan_op(op, p.indices, bow_machine());
  const ipu::OpProgram program = ipu::build_op_program(op, plan, p.indices, bow_machine(), sim::Mode::functional);
  sim::Engine& engine = ipu::engine_for(bow_machine());
  engine.load(program.program, bow_machine().chip, sim::Mode::timing_only);
  return engine.run().total_cycles;
}

void hydronet_listed_transfers(benchmark::State& state) {
  keep_freed_heap_for_reuse();
  const auto& points = hydronet_grid_sample();
  std::int64_t cycles = 0;
  for (auto _ : state) {
    for (const GridPoint& p : points) cycles += listed_transfer_cycles(p);
  }
  benchmark::DoNotOptimize(cycles);
  state.counters["points_per_s"] =
      benchmark::Counter(static_cast<double>(points.size()) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void hydronet_timing_only(benchmark::State& state, bool through_kernel) {
  keep_freed_heap_for_reuse();
  const auto& points = hydronet_grid_sample();
  sim::Engine::sequence_timing_only_in_systemc(through_kernel);
  std::int64_t cycles = 0;
  for (auto _ : state) {
    for (const GridPoint& p : points) cycles += ipu::simulate_op_timing(p.graph.ops.front(), p.indices, bow_machine()).stats.total_cycles;
  }
  sim::Engine::sequence_timing_only_in_systemc(false);
  benchmark::DoNotOptimize(cycles);
  state.counters["points_per_s"] =
      benchmark::Counter(static_cast<double>(points.size()) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK_CAPTURE(hydronet_timing_only, bow_quarter_grid_phases_laid_end_to_end, false)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK_CAPTURE(hydronet_timing_only, bow_quarter_grid_through_systemc, true)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK(hydronet_listed_transfers)->Name("hydronet_timing_only/bow_quarter_grid_transfers_listed")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
