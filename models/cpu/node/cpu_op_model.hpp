#pragma once
// The per-op cost of the cpu-model backend: a roofline plus a fixed overhead,
//   time_s = max(bytes / achievable DRAM bandwidth, flops / peak of the unit the op runs on)
//            + per_op_overhead_s
// with bytes and FLOPs the op's own accounting (ir/op_graph.hpp: Op::min_bytes, Op::flops), so every
// kind the op graph has, training kinds included, is priced the same way. The unit: matmul and
// segment_matmul in bfloat16 on AMX, in float16 on AVX-512-FP16, in float32 on AVX-512; every other op
// on the float32 vector units (16-bit values widened, as CPU kernels do for element-wise work).
// Assumptions (models/cpu/README.md, "The cpu-model backend"): every byte comes from DRAM once (no cache
// reuse credited, none lost to whole cache lines), the op uses all cores of every socket, and a matmul
// reaches the unit's peak.
#include <string>

#include <nlohmann/json.hpp>

#include "ir/op_graph.hpp"
#include "models/cpu/node/cpu_node.hpp"

namespace tilesim::cpu_model {

struct CpuOpPrediction {
  double time_s = 0;
  double memory_s = 0;       // bytes / stream bandwidth
  double compute_s = 0;      // flops / peak
  double overhead_s = 0;
  double bytes = 0;
  double flops = 0;
  std::string unit;          // "AMX", "AVX-512-FP16", "AVX-512"
  std::string bound;         // "memory" or "compute"
  nlohmann::json to_json() const;
};

// Pure; throws std::invalid_argument for an op the model cannot price (an int32 op dtype).
CpuOpPrediction predict_cpu_op(const Op& op, const CpuNode& node);

}  // namespace tilesim::cpu_model
