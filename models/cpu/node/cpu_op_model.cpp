#include "models/cpu/node/cpu_op_model.hpp"

#include <algorithm>
#include <stdexcept>

namespace tilesim::cpu_model {

namespace {

bool is_matrix_product(OpKind kind) { return kind == OpKind::matmul || kind == OpKind::segment_matmul; }

// The unit an op's FLOPs run on, and its peak. A matrix product in bfloat16 goes to AMX and in float16
// to AVX-512-FP16 (oneDNN's choices on a part that has them); everything else runs on the float32
// vector lanes: element-wise and scatter kernels widen 16-bit values to float32 to compute.
std::pair<std::string, double> unit_of(const Op& op, const CpuNode& node) {
  if (is_matrix_product(op.kind)) {
    if (op.dtype == DType::bfloat16) return {"AMX", node.bf16_amx_flops_per_s()};
    if (op.dtype == DType::float16) return {"AVX-512-FP16", node.fp16_vector_flops_per_s()};
  }
  return {"AVX-512", node.fp32_vector_flops_per_s()};
}

}  // namespace

nlohmann::json CpuOpPrediction::to_json() const {
  return {{"model", "cpu-model roofline: max(bytes / stream bandwidth, flops / unit peak) + per-op overhead"},
          {"memory_s", memory_s},
          {"compute_s", compute_s},
          {"overhead_s", overhead_s},
          {"bytes", bytes},
          {"flops", flops},
          {"unit", unit},
          {"bound", bound}};
}

CpuOpPrediction predict_cpu_op(const Op& op, const CpuNode& node) {
  if (!is_value_dtype(op.dtype))
    throw std::invalid_argument("op '" + op.name + "': dtype " + to_string(op.dtype) + " is not a value type the CPU model prices");
  CpuOpPrediction p;
  p.bytes = static_cast<double>(op.min_bytes());
  p.flops = op.flops();
  const auto [unit, peak_flops_per_s] = unit_of(op, node);
  p.unit = unit;
  p.memory_s = p.bytes / node.stream_bytes_per_s();
  p.compute_s = p.flops / peak_flops_per_s;
  p.overhead_s = node.per_op_overhead_s;
  p.bound = p.compute_s > p.memory_s ? "compute" : "memory";
  p.time_s = std::max(p.memory_s, p.compute_s) + p.overhead_s;
  return p;
}

}  // namespace tilesim::cpu_model
