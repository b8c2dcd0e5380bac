#pragma once
// The table that closes a benchmark run: for each op and shape, tilesim's kernel beside the torch-cpu
// peer measured in the same run, with effective bandwidth and the speed-up, and the medians over shapes.
// Benchmarks take part by their name, "peer/OP/SHAPE/IMPL" (IMPL: tilesim, or torch... for a peer), and
// by registering the bytes one call reads plus writes (and, for products, the FLOPs one call does).
// Beside the ratio to ATen, each row gives its share of this host's measured ceiling (set_ceilings,
// from kernels/cpu/host_calibration measured once at the start of the run): the streaming bandwidth for
// memory-bound ops, the peak FLOP/s for matmuls.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tilesim::bench {

// Bytes one call of the named benchmark reads plus writes (its effective traffic).
void register_bytes(const std::string& benchmark_name, double bytes);
// FLOPs one call of the named benchmark does (2 m k n for a product), in `dtype` ("float32",
// "bfloat16", "float16"): its row is then compute-bound, read against the FLOP ceilings.
void register_flops(const std::string& benchmark_name, double flops, const std::string& dtype);

// This host's measured ceilings (0 where not measured).
struct Ceilings {
  double stream_bytes_per_s = 0;          // STREAM triad
  double float32_fma_flops_per_s = 0;     // register FMA loop, all threads
  std::map<std::string, double> matmul_flops_per_s;        // a 2048^3 product per dtype, through the library
  std::map<std::string, std::string> matmul_instruction_set;  // per dtype: "AMX", "AVX-512-BF16", ...
};
void set_ceilings(const Ceilings& ceilings);

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
