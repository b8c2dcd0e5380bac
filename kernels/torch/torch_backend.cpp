#include "kernels/torch/torch_backend.hpp"

#include <omp.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "common/error.hpp"
#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/cpu/guarded_timing.hpp"
#include "kernels/cpu/openblas_matmul.hpp"
#include "kernels/cpu/timing.hpp"
#include "kernels/run_ops.hpp"
#include "kernels/torch/accumulation_probe.hpp"
#include "kernels/torch/torch_ops.hpp"
#include "kernels/torch/torch_training.hpp"
#include "kernels/torch/training_graph.hpp"

namespace tilesim::kernels::torch_peer {
namespace {

// The ATen call for one op, as PyG makes it, writing `out` (operands checked by run_measured_ops).
PeerCall make_call(const Op& op, const Operands& o, float* out) {
  const OpShape& s = op.shape;
  switch (op.kind) {
    case OpKind::gather: return index_select(o.input->data(), s.num_inputs, s.num_features, o.indices->data(), s.num_outputs, out);
    case OpKind::scatter_add:
    case OpKind::scatter_mean:
    case OpKind::scatter_max: {
      const cpu::Reduce reduce = op.kind == OpKind::scatter_add ? cpu::Reduce::sum
                                 : op.kind == OpKind::scatter_mean ? cpu::Reduce::mean : cpu::Reduce::max;
      return scatter(reduce, o.input->data(), s.num_inputs, s.num_features, o.indices->data(), s.num_outputs, out);
    }
    case OpKind::degree_count: return degree(o.indices->data(), s.num_inputs, s.num_outputs, out);
    case OpKind::matmul:
      return mm(o.input->data(), o.weight->data(), s.num_inputs, s.num_features, s.out_features, op.bias >= 0 ? o.bias->data() : nullptr, out);
    case OpKind::segment_matmul:
      return segment_mm(o.input->data(), o.indices->data(), s.num_segments, o.weight->data(), s.num_features, s.out_features, out);
    case OpKind::unary: return unary(op.unary, op.scalar, o.input->data(), s.num_inputs * s.num_features, out);
    case OpKind::binary:
      return binary(op.binary, o.input->data(), s.num_inputs, s.num_features, o.weight->data(), s.other_rows, s.other_groups, out);
    case OpKind::cast: return cast(op.input_dtype, op.dtype, op.cast_scale(), o.input->data(), s.num_inputs * s.num_features, out);
    case OpKind::unary_grad:
    case OpKind::sum_to:
    case OpKind::loss:
    case OpKind::loss_grad:
    case OpKind::optimizer_step: break;  // rejected by require_forward_op before this
  }
  throw std::logic_error("torch-cpu backend: op '" + op.name + "': unknown op kind");
}

// A probe's finding for the report: where the partial sums live ("float32", the dtype, or "not run" where
// ATen has no mm of the dtype) and the probe's own words.
nlohmann::json probe_json(const ProbeOutcome& p) {
  const std::string in = !p.ran ? "not run" : p.accumulation == reference::DotAccumulation::in_dtype ? to_string(p.dtype) : "float32";
  return {{"partial_sums_in", in}, {"probe", p.detail}};
}

double load_average_1min() {
  std::ifstream loadavg("/proc/loadavg");
  double load = -1;
  loadavg >> load;
  return loadavg ? load : -1;
}

class TorchCpuBackend : public Backend {
 public:
  std::string name() const override { return "torch-cpu"; }
  const TensorValues* computed_outputs() const override { return &outputs_; }
  // Probed on this host (accumulation_probe.hpp): libtorch's half matmuls accumulate in float32 on some
  // CPUs and in the dtype on others.
  reference::Accumulation accumulation() const override { return host_accumulation().accumulation; }

  // Ops run in graph order; an op reads earlier ops' outputs where the graph says so (run_ops.hpp).
  // Throws std::invalid_argument for values that do not match the op's shape, an index out of range
  // (the workload layer should have rejected them) or a dtype other than float32.
  BackendResult run(const OpGraph& graph, const TensorValues& inputs, const RunOptions& options) override {
    const auto wall_start = std::chrono::steady_clock::now();
    // The same cores as the cpu backend's kernels: ATen's pool gets the OpenMP thread count they use.
    const int threads = omp_get_max_threads();
    set_num_threads(threads);
    BackendResult result;
    result.backend = name();
    result.kind = ResultKind::measured;
    result.machine = cpu::host_description() + ", libtorch " + version();

    // A training step runs as a PyTorch training loop does (autograd, torch::optim), one row per phase;
    // a forward graph runs op by op through the out= calls below, one row per op.
    const bool training = is_training_graph(graph);
    const HostAccumulation& probed = host_accumulation();
    if (training) {
      run_training_step(graph, inputs, options, result, outputs_, probed.accumulation);
    } else {
      run_measured_ops(
          graph, inputs, "torch-cpu backend",
          [&](const Op& op, const Operands& operands, std::vector<float>& output) {
            // A half op's operands become tensors of its dtype once, as a half model holds them.
            const PeerCall call = [&] {
              ValueDTypeScope scope(op.dtype);
              return make_call(op, operands, output.data());
            }();
            // Guarded as the cpu backend's calls are (kernels/cpu/guarded_timing.hpp): a fallback to the
            // free cores resizes ATen's pool, and the size is put back after the op.
            try {
              cpu::TimingStats stats = cpu::time_calls_guarded([&call] { call(); }, options.warmup, options.repeats, threads,
                                                               [](int n) { set_num_threads(n); });
              call.finish();
              return stats;
            } catch (const UnsupportedByPeer& e) {
              throw InputError("backend torch-cpu: op '" + op.name + "' (" + to_string(op.kind) + ", " + to_string(op.dtype) +
                               "): " + e.what() + "; run it on the other backends, or in another dtype");
            }
          },
          result, outputs_, /*runs_training=*/false, probed.accumulation);
    }

    result.host = {{"torch_version", version()},
                   {"aten_calls",
                    {{"gather", "index_select_out(out, table, 0, index)"},
                     {"scatter_add", "out.zero_().scatter_add_(0, index.view(-1, 1).expand(E, F), src), int64 index"},
                     {"scatter_mean", "out.zero_().scatter_reduce_(0, index (expanded), src, 'mean', include_self=False)"},
                     {"scatter_max", "out.zero_().scatter_reduce_(0, index (expanded), src, 'amax', include_self=False)"},
                     {"degree_count", "out.zero_().scatter_add_(0, index, ones(E))"},
                     {"matmul", "mm_out, or addmm_out(out, bias, x, W) with a bias"},
                     {"segment_matmul", "mm_out per segment on row slices (pyg_lib's CPU path)"},
                     {"unary", "clamp_min_out (relu), leaky_relu_out, softplus_out + sub_ (shifted softplus), exp_out, mul_out, "
                               "pow_out(-0.5) / reciprocal_out + masked_fill_, mul_out + cos_ + add_ + mul_ + masked_fill_ (cutoff)"},
                     {"binary", "add/sub/mul/div_out with other viewed [rows or 1, groups, 1]"},
                     {"cast", "out.copy_(x) (tensor.to(dtype)); with a scale, mul_out into float32 then copy_, or copy_ then mul_ "
                              "for a float32 result"},
                     {"training_step",
                      "parameters as leaf tensors requiring grad; forward ops recorded by autograd as PyG calls them "
                      "(index_select, zeros().scatter_add_ / scatter_reduce_(mean | amax, include_self=False), mm / addmm, "
                      "relu, leaky_relu, softplus - log 2, exp, mul, pow(-0.5) + masked_fill, the cosine cutoff, broadcasting "
                      "add/sub/mul/div, detach() where the graph detaches); at::cross_entropy_loss / mse_loss (mean); "
                      "loss.backward(); the graph's gradient ops on the .grad tensors; torch::optim::Adam / SGD step with "
                      "the state of the step's inputs. A half model in mixed precision as torch.amp: float32 master "
                      "parameters cast with .to(dtype) where the forward reads them, the predictions .float() for the loss, "
                      "(loss * scale).backward() and each .grad.mul_(1 / scale) before the step. One row per phase"}}},
                   {"aten_threads", num_threads()},
                   // How ATen adds up half matmuls here: its own gemm keeps bfloat16 partial sums where the CPU
                   // lacks AVX-512 (accumulation_probe.hpp); the verification bounds of matmuls follow it.
                   {"half_matmul_accumulation", {{"float16", probe_json(probed.float16)}, {"bfloat16", probe_json(probed.bfloat16)}}},
                   // ATen's float32 mm calls the BLAS, Debian's OpenBLAS (the same library the process loaded
                   // for the cpu backend): the kernel set it chose at load, from cpuid (openblas_coretype.hpp).
                   {"blas", "OpenBLAS " + cpu::openblas_core()},
                   {"rows", training ? "one per phase of the training step (autograd runs the backward as one call)" : "one per op"},
                   {"omp_max_threads", threads},
                   {"threads_note", "ATen's intra-op threads set to the cpu backend's OpenMP thread count, so both use the same cores"},
                   {"logical_cpus", std::thread::hardware_concurrency()},
                   {"load_average_1min", load_average_1min()},
                   {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count()}};
    return result;
  }

 private:
  TensorValues outputs_;
};

}  // namespace

bool built_in() { return true; }

std::string description() { return "libtorch " + version() + " (ATen)"; }

std::unique_ptr<Backend> make_backend() { return std::make_unique<TorchCpuBackend>(); }

}  // namespace tilesim::kernels::torch_peer
