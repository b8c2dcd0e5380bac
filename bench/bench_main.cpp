// Google Benchmark's main, with the peer table printed after the usual console output.
#include <benchmark/benchmark.h>

#include "bench/peer_table.hpp"

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  tilesim::bench::PeerTableReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
