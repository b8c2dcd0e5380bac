// What the disturbance guard (kernels/cpu/guarded_timing.hpp) adds to one op's measurement on a quiet
// host: two usage readings around the timed calls. Goal (issue 15 item 6): a quiet measurement is not
// slowed noticeably, i.e. time_calls_guarded costs at most tens of microseconds more per op than
// time_calls, whatever the op. Run with --benchmark_filter=timing/.
#include <benchmark/benchmark.h>
#include <omp.h>

#include "kernels/cpu/disturbance.hpp"
#include "kernels/cpu/guarded_timing.hpp"
#include "kernels/cpu/timing.hpp"

namespace {

namespace cpu = tilesim::kernels::cpu;

// One reading: the schedstat file of every thread of the process, its CPU time and the clock.
void usage_reading(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(cpu::read_usage());
}
BENCHMARK(usage_reading)->Name("timing/usage_reading")->Unit(benchmark::kMicrosecond);

// One op's measurement as the backends take it (2 warm-up and 10 timed calls of an empty op), plain and
// guarded: the difference is the guard's cost per op.
void plain_measurement(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(cpu::time_calls([] {}, 2, 10));
}
BENCHMARK(plain_measurement)->Name("timing/time_calls")->Unit(benchmark::kMicrosecond);

void guarded_measurement(benchmark::State& state) {
  const int threads = omp_get_max_threads();
  for (auto _ : state)
    benchmark::DoNotOptimize(cpu::time_calls_guarded([] {}, 2, 10, threads, [](int n) { omp_set_num_threads(n); }));
}
BENCHMARK(guarded_measurement)->Name("timing/time_calls_guarded")->Unit(benchmark::kMicrosecond);

}  // namespace
