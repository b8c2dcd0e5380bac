#include "kernels/run_ops.hpp"

#include <limits>
#include <stdexcept>

#include "ir/reference/reference.hpp"

namespace tilesim::kernels {

void run_measured_ops(const OpGraph& graph, const TensorValues& inputs, const std::string& who, const TimedOpRunner& run_op,
                      BackendResult& result, TensorValues& outputs, bool runs_training,
                      const reference::Accumulation& accumulation) {
  outputs = TensorValues{};
  for (const Op& op : graph.ops) {
    if (!runs_training) require_forward_op(op, who);
    const Operands operands = resolve_operands(op, inputs, outputs);
    check_operands(op, operands, who);

    std::vector<float> output(static_cast<std::size_t>(output_elements(op)), std::numeric_limits<float>::quiet_NaN());
    const cpu::TimingStats stats = run_op(op, operands, output);
    const reference::Verification verification = reference::verify(op, operands, output, accumulation);

    OpResult row = OpResult::for_op(op);
    row.time_s = stats.median_s;
    row.bytes_by_level = {{"dram_min_bytes", op.min_bytes()}};
    row.verified = verification.ok;
    row.verification = verification.detail;
    row.timing = stats.to_json();
    result.time_s += row.time_s;
    result.ops.push_back(std::move(row));
    outputs.set_f32(op.output, std::move(output), op.dtype);
  }
}

}  // namespace tilesim::kernels
