#include "kernels/torch/torch_backend.hpp"

#include <omp.h>

#include <chrono>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <thread>

#include "kernels/cpu/cpu_backend.hpp"
#include "kernels/cpu/timing.hpp"
#include "kernels/reference/reference.hpp"
#include "kernels/torch/torch_ops.hpp"

namespace tilesim::kernels::torch_peer {
namespace {

[[noreturn]] void bad_values(const Op& op, const std::string& what) {
  throw std::invalid_argument("torch-cpu backend: op '" + op.name + "': " + what);
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

  // Ops run in graph order; an op whose input or indices another op produced reads that op's output.
  // Throws std::invalid_argument for values that do not match the op's shape, an index out of range
  // (the workload layer should have rejected them) or a dtype other than float32.
  BackendResult run(const OpGraph& graph, const TensorValues& inputs, const RunOptions& options) override {
    const auto wall_start = std::chrono::steady_clock::now();
    // The same cores as the cpu backend's kernels: ATen's pool gets the OpenMP thread count they use.
    const int threads = omp_get_max_threads();
    set_num_threads(threads);
    outputs_ = TensorValues{};
    BackendResult result;
    result.backend = name();
    result.kind = ResultKind::measured;
    result.machine = cpu::host_description() + ", libtorch " + version();

    for (const Op& op : graph.ops) {
      if (op.dtype != DType::float32) bad_values(op, "dtype " + to_string(op.dtype) + " is not implemented on torch-cpu");
      const bool chained = outputs_.has(op.input) || outputs_.has(op.indices);
      const std::vector<float>& input = outputs_.has(op.input) ? outputs_.f32(op.input) : inputs.f32(op.input);
      const std::vector<std::int32_t>& indices = outputs_.has(op.indices) ? outputs_.i32(op.indices) : inputs.i32(op.indices);
      const OpShape& shape = op.shape;
      if (static_cast<std::int64_t>(input.size()) != shape.num_inputs * shape.num_features)
        bad_values(op, "input has " + std::to_string(input.size()) + " values, expected " + std::to_string(shape.num_inputs) +
                           " x " + std::to_string(shape.num_features));
      if (static_cast<std::int64_t>(indices.size()) != op.num_indices())
        bad_values(op, "indices has " + std::to_string(indices.size()) + " values, expected " + std::to_string(op.num_indices()));
      // ATen checks indices too, but by throwing from inside a timed call; checked here, once, instead.
      for (std::size_t i = 0; i < indices.size(); ++i)
        if (indices[i] < 0 || indices[i] >= op.index_range())
          bad_values(op, "indices[" + std::to_string(i) + "] = " + std::to_string(indices[i]) + " is outside [0, " +
                             std::to_string(op.index_range()) + ")");

      // NaN where ATen must write: an element no call wrote fails verification instead of passing as 0.
      std::vector<float> output(static_cast<std::size_t>(shape.num_outputs * shape.num_features),
                                std::numeric_limits<float>::quiet_NaN());
      const PeerCall call =
          op.kind == OpKind::gather
              ? index_select(input.data(), shape.num_inputs, shape.num_features, indices.data(), shape.num_outputs, output.data())
              : scatter(cpu::Reduce::sum, input.data(), shape.num_inputs, shape.num_features, indices.data(), shape.num_outputs,
                        output.data());
      const cpu::TimingStats stats = cpu::time_calls([&call] { call(); }, options.warmup, options.repeats);

      reference::Verification verification;
      if (chained) {
        TensorValues operands;
        operands.set_f32(op.input, input);
        operands.set_i32(op.indices, indices);
        verification = reference::verify(op, operands, output);
      } else {
        verification = reference::verify(op, inputs, output);
      }

      OpResult row;
      row.op = op.name;
      row.op_kind = op.kind;
      row.shape = shape;
      row.dtype = op.dtype;
      row.time_s = stats.median_s;
      row.flops = op.flops();
      row.min_bytes = op.min_bytes();
      row.bytes_by_level = {{"dram_min_bytes", op.min_bytes()}};
      row.verified = verification.ok;
      row.verification = verification.detail;
      row.timing = stats.to_json();
      result.time_s += row.time_s;
      result.ops.push_back(std::move(row));
      outputs_.set_f32(op.output, std::move(output));
    }

    result.host = {{"torch_version", version()},
                   {"aten_calls", {{"gather", "index_select_out(out, table, 0, index)"},
                                   {"scatter_add", "out.zero_().scatter_add_(0, index.view(-1, 1).expand(E, F), src), int64 index"}}},
                   {"aten_threads", num_threads()},
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
