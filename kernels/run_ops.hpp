#pragma once
// The per-op loop every measured backend (cpu, torch-cpu, cuda) shares: resolve each op's operands
// (graph inputs or earlier outputs), check them, hand the op to the backend to run and time, verify the
// output against the reference, build the result row and keep the output for the ops after it.
#include <functional>
#include <string>
#include <vector>

#include "ir/op_graph.hpp"
#include "ir/operands.hpp"
#include "ir/reference/reference.hpp"
#include "ir/tensor_values.hpp"
#include "kernels/cpu/timing.hpp"
#include "results/result.hpp"

namespace tilesim::kernels {

// Runs one op (all its warm-up and timed calls) into `output`, which holds output_elements(op) NaNs on
// entry, so an element no call wrote fails verification instead of passing as 0; returns the timings.
using TimedOpRunner = std::function<cpu::TimingStats(const Op& op, const Operands& operands, std::vector<float>& output)>;

// Runs the graph's ops in order through `run_op` and appends one row per op to result.ops (time_s added
// to result.time_s). `outputs` is cleared first and then holds every op's output by tensor id. `who`
// names the backend in errors ("cpu backend"). Throws std::invalid_argument for a dtype other than
// float32 or operands that do not match an op's shape or index range (the workload layer should have
// rejected them). A backend that does not run training steps leaves `runs_training` false, and a
// training kind or transposed matmul is refused by name (require_forward_op). Outputs are verified under
// `accumulation`, how the backend adds up half matmuls (reference::Accumulation).
void run_measured_ops(const OpGraph& graph, const TensorValues& inputs, const std::string& who, const TimedOpRunner& run_op,
                      BackendResult& result, TensorValues& outputs, bool runs_training = false,
                      const reference::Accumulation& accumulation = {});

}  // namespace tilesim::kernels
