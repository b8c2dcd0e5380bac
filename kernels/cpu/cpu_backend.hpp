#pragma once
// The measured peer of the simulator: runs each op of a graph with the real OpenMP kernels on this host,
// times it (warm-up calls, then repeats; the median is reported, the spread kept) and verifies the output
// of the last timed call against the reference.
#include <string>

#include "ir/op_graph.hpp"
#include "ir/tensor_values.hpp"
#include "results/backend.hpp"

namespace tilesim::kernels::cpu {

class CpuBackend : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  // Every op kind of the op graph. Ops run in graph order; an operand another op produced is read from
  // that op's output (kernels/run_ops.hpp). Throws std::invalid_argument when values are missing, do not
  // match the op's shape, hold an index out of range or segment offsets out of order (the workload layer
  // should have rejected them). Ops run in their dtype (half ops through half_ops.hpp); a cast reads its
  // input in the input tensor's dtype (cast.hpp), so a graph mixes dtypes op by op.
  BackendResult run(const OpGraph& graph, const TensorValues& inputs, const RunOptions& options) override;
  // Each op's output tensor (keyed by Op::output) from the last timed call of the latest run(), so other
  // backends' outputs can be compared with the CPU's.
  const TensorValues& outputs() const { return outputs_; }
  const TensorValues* computed_outputs() const override { return &outputs_; }

 private:
  TensorValues outputs_;
};

// This host in words, e.g. "AMD EPYC 9654 96-Core Processor, 2 logical CPUs, 2 OpenMP threads".
std::string host_description();

}  // namespace tilesim::kernels::cpu
