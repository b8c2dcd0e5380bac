// Simulator speed against the native kernel on the same data: the largest hydronet point (gather from a
// 4096 x 512 float32 table, 32768 lookups; and the scatter-add of 4096 messages of 512 features into
// 32768 rows) on the simulated Bow, functional and timing-only, beside the CPU kernel.
// Goals (issue 2): functional simulation within 10x of the CPU kernel; timing-only under 50 ms.
#include <benchmark/benchmark.h>

#include <random>

#include "kernels/cpu/gather_scatter.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "models/ipu/programs/op_program.hpp"
#include "models/ipu/planning/plan.hpp"
#include "models/ipu/programs/tensor_io.hpp"

using namespace tilesim;

namespace {

struct LargestPoint {
  OpGraph graph;
  std::vector<float> input;
  std::vector<std::int32_t> indices;
  const Op& op() const { return graph.ops.front(); }

  explicit LargestPoint(OpKind kind) {
    const OpShape shape{4096, 512, 32768};
    graph.add_gather_scatter("largest", kind, DType::float32, shape);
    std::mt19937_64 rng(1);
    std::normal_distribution<float> normal;
    input.resize(static_cast<std::size_t>(shape.num_inputs * shape.num_features));
    for (auto& x : input) x = normal(rng);
    std::uniform_int_distribution<std::int32_t> uni(0, static_cast<std::int32_t>(op().index_range() - 1));
    indices.resize(static_cast<std::size_t>(op().num_indices()));
    for (auto& i : indices) i = uni(rng);
  }
};

const ipu::IpuMachine& bow() {
  static const ipu::IpuMachine m = ipu::load_ipu_machine("bow");
  return m;
}

// Plan, build, load, move the inputs in, run, and read the outputs back: everything a functional
// simulation does except checking the outputs against the reference.
void simulate(benchmark::State& state, OpKind kind, sim::Mode mode) {
  const LargestPoint p(kind);
  auto& engine = ipu::engine_for(bow());
  std::vector<float> out(static_cast<std::size_t>(p.op().shape.num_outputs * p.op().shape.num_features));
  sim::Cycles cycles = 0;
  for (auto _ : state) {
    const auto plan = ipu::plan_op(p.op(), bow());
    const auto prog = ipu::build_op_program(p.op(), plan, p.indices, bow());
    engine.load(prog.program, bow().chip, mode);
    if (mode == sim::Mode::functional) {
      ipu::write_pieces(engine, prog.input, p.input, prog.input_width);
      ipu::write_pieces(engine, prog.indices, p.indices, 1);
    }
    cycles = engine.run().total_cycles;
    if (mode == sim::Mode::functional) ipu::read_pieces(engine, prog.output, out, prog.output_width);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["simulated_cycles"] = static_cast<double>(cycles);
  state.counters["simulated_time_us"] = static_cast<double>(cycles) / bow().chip.clock_hz * 1e6;
  state.counters["simulated_cycles_per_s"] =
      benchmark::Counter(static_cast<double>(cycles) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void native(benchmark::State& state, OpKind kind) {
  const LargestPoint p(kind);
  const auto& s = p.op().shape;
  std::vector<float> out(static_cast<std::size_t>(s.num_outputs * s.num_features));
  for (auto _ : state) {
    if (kind == OpKind::gather) {
      kernels::cpu::gather_f32(p.input.data(), s.num_inputs, s.num_features, p.indices.data(), s.num_outputs, out.data());
    } else {
      kernels::cpu::scatter_add_f32(p.input.data(), s.num_inputs, s.num_features, p.indices.data(), s.num_outputs, out.data());
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * p.op().min_bytes());
}

}  // namespace

BENCHMARK_CAPTURE(simulate, gather_4096x512_32768_functional, OpKind::gather, sim::Mode::functional)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(simulate, gather_4096x512_32768_timing_only, OpKind::gather, sim::Mode::timing_only)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(native, gather_4096x512_32768_cpu_kernel, OpKind::gather)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(simulate, scatter_add_4096x512_32768_functional, OpKind::scatter_add, sim::Mode::functional)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(simulate, scatter_add_4096x512_32768_timing_only, OpKind::scatter_add, sim::Mode::timing_only)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(native, scatter_add_4096x512_32768_cpu_kernel, OpKind::scatter_add)->Unit(benchmark::kMillisecond)->UseRealTime();
