#pragma once
// The table that closes a benchmark run: for each op and shape, tilesim's kernel beside the torch-cpu
// peer measured in the same run, with effective bandwidth and the speed-up, and the medians over shapes.
// Benchmarks take part by their name, "peer/OP/SHAPE/IMPL" (IMPL: tilesim, or torch... for a peer), and
// by registering the bytes one call reads plus writes.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tilesim::bench {

// Bytes one call of the named benchmark reads plus writes (its effective traffic).
void register_bytes(const std::string& benchmark_name, double bytes);

// Console output as usual, plus the peer table at the end (on stdout).
class PeerTableReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

 private:
  std::map<std::string, double> seconds_;  // per call, by name; the median over repetitions when there are several
  std::vector<std::string> order_;         // names in the order they ran
};

}  // namespace tilesim::bench
