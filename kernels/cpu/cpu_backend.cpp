#include "kernels/cpu/cpu_backend.hpp"

#include <omp.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <thread>

#include "common/host_info.hpp"
#include "kernels/cpu/cast.hpp"
#include "kernels/cpu/degree_count.hpp"
#include "kernels/cpu/elementwise.hpp"
#include "kernels/cpu/gather_scatter.hpp"
#include "kernels/cpu/guarded_timing.hpp"
#include "kernels/cpu/half_ops.hpp"
#include "kernels/cpu/matmul.hpp"
#include "kernels/cpu/scatter_reduce.hpp"
#include "kernels/cpu/timing.hpp"
#include "kernels/cpu/training_ops.hpp"
#include "kernels/run_ops.hpp"

namespace tilesim::kernels::cpu {
namespace {

// The 1-minute load average: other work on the host stalls the OpenMP team (a busy core can hold a
// worker for a whole scheduler slice), so it says how far the timings can be trusted. -1 when unknown.
double load_average_1min() {
  std::ifstream loadavg("/proc/loadavg");
  double load = -1;
  loadavg >> load;
  return loadavg ? load : -1;
}

// Runs one op with the host kernels into `out` (operands checked by run_measured_ops).
void run_op(const Op& op, const Operands& o, float* out) {
  const OpShape& s = op.shape;
  switch (op.kind) {
    case OpKind::gather: gather_f32(o.input->data(), s.num_inputs, s.num_features, o.indices->data(), s.num_outputs, out); return;
    case OpKind::scatter_add:
      scatter_add_f32(o.input->data(), s.num_inputs, s.num_features, o.indices->data(), s.num_outputs, out);
      return;
    case OpKind::scatter_mean:
    case OpKind::scatter_max:
      scatter_reduce<float>(op.kind == OpKind::scatter_mean ? Reduce::mean : Reduce::max, o.input->data(), s.num_inputs,
                            s.num_features, o.indices->data(), s.num_outputs, out);
      return;
    case OpKind::degree_count: degree_count_f32(o.indices->data(), s.num_inputs, s.num_outputs, out); return;
    case OpKind::matmul:
      if (op.transpose_input || op.transpose_weight) {
        matmul_transposed_f32(o.input->data(), op.transpose_input, o.weight->data(), op.transpose_weight, s.num_inputs,
                              s.num_features, s.out_features, out);
        return;
      }
      matmul_f32(o.input->data(), o.weight->data(), s.num_inputs, s.num_features, s.out_features,
                 op.bias >= 0 ? o.bias->data() : nullptr, out);
      return;
    case OpKind::segment_matmul:
      if (op.transpose_input) {
        segment_matmul_transposed_input_f32(o.input->data(), o.segment_offsets()->data(), s.num_segments, o.weight->data(), s.num_features,
                                            s.out_features, out);
        return;
      }
      if (op.transpose_weight) {
        segment_matmul_transposed_weight_f32(o.input->data(), o.segment_offsets()->data(), s.num_segments, o.weight->data(), s.num_features,
                                             s.out_features, out);
        return;
      }
      segment_matmul_f32(o.input->data(), o.segment_offsets()->data(), s.num_segments, o.weight->data(), s.num_features, s.out_features, out);
      return;
    case OpKind::unary: unary_f32(op.unary, op.scalar, o.input->data(), s.num_inputs * s.num_features, out); return;
    case OpKind::binary:
      binary_f32(op.binary, o.input->data(), s.num_inputs, s.num_features, o.binary_other()->data(), s.other_rows, s.other_groups, out);
      return;
    case OpKind::unary_grad:
      unary_grad_f32(op.unary, op.scalar, o.input->data(), o.weight->data(), s.num_inputs * s.num_features, out);
      return;
    case OpKind::sum_to: sum_to_f32(o.input->data(), s.num_inputs, s.num_features, s.other_rows, s.other_groups, out); return;
    case OpKind::loss:
    case OpKind::loss_grad: {
      const std::int32_t* labels = op.loss == LossFn::cross_entropy ? o.indices->data() : nullptr;
      const float* targets = op.loss == LossFn::mse ? o.weight->data() : nullptr;
      const float* row_weights = op.loss_row_weights() >= 0 ? o.loss_row_weights()->data() : nullptr;
      if (op.kind == OpKind::loss) loss_f32(op.loss, o.input->data(), s.num_inputs, s.num_features, labels, targets, row_weights, out);
      else loss_grad_f32(op.loss, o.input->data(), s.num_inputs, s.num_features, labels, targets, row_weights, out);
      return;
    }
    case OpKind::optimizer_step:
      optimizer_step_f32(op.optimizer, o.input->data(), o.weight->data(), op.optimizer_state() >= 0 ? o.optimizer_state()->data() : nullptr,
                         op.step_number() >= 0 ? (*o.step_number())[0] : 1.0, s.num_inputs * s.num_features, out);
      return;
    case OpKind::cast: break;  // CastOp, which holds its input in its own dtype
  }
  throw std::logic_error("cpu backend: op '" + op.name + "': unknown op kind");
}

}  // namespace

std::string host_description() {
  return host_cpu_model_name() + ", " + std::to_string(std::thread::hardware_concurrency()) + " logical CPUs, " +
         std::to_string(omp_get_max_threads()) + " OpenMP threads";
}

BackendResult CpuBackend::run(const OpGraph& graph, const TensorValues& inputs, const RunOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  BackendResult result;
  result.backend = name();
  result.kind = ResultKind::measured;
  result.machine = host_description();

  run_measured_ops(
      graph, inputs, "cpu backend",
      [&](const Op& op, const Operands& operands, std::vector<float>& output) {
        // A half op's 16-bit operands are made once, as a half model holds them; its calls read and write
        // 2-byte values, and its output is widened for verification after the timing.
        std::optional<HalfOp> half;
        std::optional<CastOp> cast;  // a cast's input and output are in dtypes of their own
        if (op.kind == OpKind::cast) cast.emplace(op, operands);
        else if (is_half_dtype(op.dtype)) half.emplace(op, operands);
        // Guarded: a measurement other work disturbed is re-measured, then on the free cores, and flagged
        // if it stays disturbed (guarded_timing.hpp); the kernels read their team size from OpenMP.
        const TimingStats stats = time_calls_guarded(
            [&] {
              if (cast) cast->run();
              else if (half) half->run();
              else run_op(op, operands, output.data());
            },
            options.warmup, options.repeats, omp_get_max_threads(), [](int threads) { omp_set_num_threads(threads); });
        if (cast) cast->output(output.data());
        if (half) half->output(output.data());
        return stats;
      },
      result, outputs_, /*runs_training=*/true);

  result.host = {{"cpu_model", host_cpu_model_name()},
                 {"logical_cpus", std::thread::hardware_concurrency()},
                 {"omp_max_threads", omp_get_max_threads()},
                 {"load_average_1min", load_average_1min()},
                 // The GEMM kernels this host's matmuls ran on, per dtype, and the kernel set OpenBLAS (the
                 // torch-cpu peer's BLAS) loaded with: a peer on generic kernels would not be a fair one.
                 {"matmul_kernels",
                  {{"float32", matmul_kernel<float>()}, {"bfloat16", matmul_kernel<BFloat16>()}, {"float16", matmul_kernel<Float16>()}}},
                 {"openblas_core", openblas_core()},
                 {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count()}};
  return result;
}

}  // namespace tilesim::kernels::cpu
