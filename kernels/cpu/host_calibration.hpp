#pragma once
// Measures this host's ceilings the way the Empirical Roofline Toolkit does: small kernels with all
// OpenMP threads, each run several times, the best trial kept (the ceiling is what the machine can
// reach, not what it usually does).
//   streaming bandwidth:  STREAM triad a[i] = b[i] + s * c[i] over three double arrays of 4x the
//                         last-level cache each, 24 bytes counted per element (no write-allocate);
//   cache bandwidth:      the same triad over three arrays that together fill a quarter of the
//                         last-level cache, repeated in each trial until it lasts 20 ms: the rate an op
//                         whose data stay in the caches can reach, far above DRAM's;
//   gather bandwidth:     64-byte rows (16 float32) gathered by random int32 indices from a table of
//                         4x the last-level cache into an output of the same size; per lookup 4 bytes of
//                         index, 64 read and 64 written are counted;
//   peak FLOP/s per dtype: independent fused multiply-adds on 64-byte vectors held in registers
//                         (16 chains per thread, enough to cover FMA latency), 2 FLOPs each;
//   matmul peak per dtype: a large square float32, bfloat16 and float16 product through the CPU kernels'
//                         matmul (oneDNN: AMX, AVX-512-BF16/FP16 where cpuid has them, else float32),
//                         2 m k n FLOPs each (kernels/cpu/matmul_peak.hpp).
#include <cstdint>
#include <map>
#include <string>

#include "kernels/cpu/matmul_peak.hpp"

#include <nlohmann/json.hpp>

namespace tilesim::cpu_model {

struct CalibrationOptions {
  int trials = 7;                       // per measurement; the best is kept
  double flops_trial_s = 0.15;          // length of one peak-FLOP/s trial
  std::int64_t working_set_bytes = 0;   // per array / table; 0: 4x the last-level cache, in [64, 512] MiB
  std::int64_t matmul_size = 2048;      // m = k = n of the matmul-peak products; 0: not measured
  int matmul_trials = 3;                // per dtype (each 2048^3 product is 17 GFLOP: 0.05-0.2 s here)
};

struct CalibrationResult {
  double stream_bytes_per_s = 0;
  double llc_stream_bytes_per_s = 0;     // the triad within the last-level cache
  std::int64_t llc_working_set_bytes = 0;  // per array of that triad
  double gather_bytes_per_s = 0;
  double float32_flops_per_s = 0;
  double float64_flops_per_s = 0;
  // By dtype ("float32", "bfloat16", "float16"): the rate, instruction set and kernel of a large matmul.
  std::map<std::string, kernels::cpu::MatmulPeak> matmul_peaks;
  int threads = 0;
  std::int64_t last_level_cache_bytes = 0;
  std::int64_t working_set_bytes = 0;
  double wall_s = 0;
  nlohmann::json details;  // per measurement: what was run and every trial's figure
};

// The last-level cache of this host in bytes (sysfs, then sysconf; 32 MiB when neither says).
std::int64_t last_level_cache_bytes();

CalibrationResult calibrate_host(const CalibrationOptions& options);

}  // namespace tilesim::cpu_model
