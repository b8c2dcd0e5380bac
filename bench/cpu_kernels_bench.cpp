// The CPU kernels on the hydronet gather/scatter grid (corners and centre of num_inputs x num_features x
// num_outputs), with bytes processed counted as the op's minimum bytes, beside single-threaded plain loops
// on the same data so the cost of a small call (and the parallel speed-up of a large one) can be read off.
// Wall time throughout: the kernels run on several threads.
#include <benchmark/benchmark.h>

#include <cstring>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "ir/op_graph.hpp"
#include "kernels/cpu/gather_scatter.hpp"

namespace {

using tilesim::OpKind;
using tilesim::OpShape;

// num_inputs, num_features, num_outputs (ir/op_graph.hpp): the eight corners of the hydronet grid and its centre.
const std::vector<std::vector<std::int64_t>> kGridPoints = {
    {16, 16, 32},     {16, 16, 32768},     {16, 512, 32},     {16, 512, 32768},  {4096, 16, 32},
    {4096, 16, 32768}, {4096, 512, 32},    {4096, 512, 32768}, {256, 64, 1024},
};

struct OpData {
  tilesim::Op op;
  std::vector<float> input;            // gather: the table; scatter_add: the messages
  std::vector<std::int32_t> indices;   // uniform with repeats, like torch.randint
  std::vector<float> output;
};

// Built once per (kind, shape) and kept: the largest points hold ~70 MB and benchmark calls each function
// several times while it settles the iteration count.
OpData& data_for(OpKind kind, const benchmark::State& state) {
  static std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t>, OpData> cache;
  const OpShape shape{state.range(0), state.range(1), state.range(2)};
  auto [it, fresh] = cache.try_emplace({static_cast<int>(kind), shape.num_inputs, shape.num_features, shape.num_outputs});
  OpData& d = it->second;
  if (!fresh) return d;
  d.op.kind = kind;
  d.op.shape = shape;
  std::mt19937 rng(2024);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  d.input.resize(static_cast<std::size_t>(shape.num_inputs * shape.num_features));
  for (float& x : d.input) x = value(rng);
  std::uniform_int_distribution<std::int32_t> index(0, static_cast<std::int32_t>(d.op.index_range() - 1));
  d.indices.resize(static_cast<std::size_t>(d.op.num_indices()));
  for (auto& i : d.indices) i = index(rng);
  d.output.assign(static_cast<std::size_t>(shape.num_outputs * shape.num_features), 0.0f);
  return d;
}

void report(benchmark::State& state, const OpData& d) {
  state.SetBytesProcessed(state.iterations() * d.op.min_bytes());
  state.counters["min_bytes"] = static_cast<double>(d.op.min_bytes());
}

void BM_cpu_gather(benchmark::State& state) {
  OpData& d = data_for(OpKind::gather, state);
  const OpShape& s = d.op.shape;
  for (auto _ : state) {
    tilesim::kernels::cpu::gather_f32(d.input.data(), s.num_inputs, s.num_features, d.indices.data(), s.num_outputs, d.output.data());
    benchmark::ClobberMemory();
  }
  report(state, d);
}

void BM_cpu_scatter_add(benchmark::State& state) {
  OpData& d = data_for(OpKind::scatter_add, state);
  const OpShape& s = d.op.shape;
  for (auto _ : state) {
    tilesim::kernels::cpu::scatter_add_f32(d.input.data(), s.num_inputs, s.num_features, d.indices.data(), s.num_outputs,
                                           d.output.data());
    benchmark::ClobberMemory();
  }
  report(state, d);
}

// Baselines: the obvious single-threaded loops, no OpenMP runtime involved. Built with the bench target's
// flags (no -march=native), so a large point may also differ by vector width, not only by threads.
void BM_plain_loop_gather(benchmark::State& state) {
  OpData& d = data_for(OpKind::gather, state);
  const OpShape& s = d.op.shape;
  const auto row_bytes = static_cast<std::size_t>(s.num_features) * sizeof(float);
  for (auto _ : state) {
    for (std::int64_t i = 0; i < s.num_outputs; ++i)
      std::memcpy(d.output.data() + i * s.num_features, d.input.data() + std::int64_t{d.indices[i]} * s.num_features, row_bytes);
    benchmark::ClobberMemory();
  }
  report(state, d);
}

void BM_plain_loop_scatter_add(benchmark::State& state) {
  OpData& d = data_for(OpKind::scatter_add, state);
  const OpShape& s = d.op.shape;
  for (auto _ : state) {
    std::memset(d.output.data(), 0, d.output.size() * sizeof(float));
    for (std::int64_t i = 0; i < s.num_inputs; ++i) {
      float* __restrict to = d.output.data() + std::int64_t{d.indices[i]} * s.num_features;
      const float* __restrict from = d.input.data() + i * s.num_features;
      for (std::int64_t f = 0; f < s.num_features; ++f) to[f] += from[f];
    }
    benchmark::ClobberMemory();
  }
  report(state, d);
}

void grid(benchmark::internal::Benchmark* b) {
  b->ArgNames({"num_inputs", "num_features", "num_outputs"});
  for (const auto& point : kGridPoints) b->Args(point);
  b->UseRealTime();
}

}  // namespace

BENCHMARK(BM_cpu_gather)->Apply(grid);
BENCHMARK(BM_plain_loop_gather)->Apply(grid);
BENCHMARK(BM_cpu_scatter_add)->Apply(grid);
BENCHMARK(BM_plain_loop_scatter_add)->Apply(grid);
