// The cuda backend's host side: device memory, CUDA-event timing and verification. Plain C++ against
// the CUDA runtime API; the kernels themselves are in cuda_kernels.cu.
#include "kernels/cuda/cuda_backend.hpp"

#include <cuda_runtime_api.h>

#include <chrono>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "common/error.hpp"
#include "kernels/cpu/timing.hpp"
#include "kernels/cuda/cuda_launch.hpp"
#include "kernels/cuda/training_bodies.hpp"
#include "kernels/cuda/value_storage.hpp"
#include "kernels/run_ops.hpp"

namespace tilesim::kernels::cuda {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("cuda backend: ") + what + ": " + cudaGetErrorString(e));
}

// Device memory for one op's operands, freed when the op is done.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes_ > 0) check(cudaMalloc(&data_, bytes_), "cudaMalloc");
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);
  }
  template <class T>
  T* as() const { return static_cast<T*>(data_); }
  template <class T>
  void upload(const std::vector<T>& host) const {
    if (!host.empty()) check(cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy to device");
  }
  template <class T>
  void download(std::vector<T>& host) const {
    if (!host.empty()) check(cudaMemcpy(host.data(), data_, host.size() * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
  }

 private:
  void* data_ = nullptr;
  std::size_t bytes_;
};

class Events {
 public:
  Events() {
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  ~Events() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  // Device time of `launches` on the default stream, in seconds.
  template <class F>
  double time(F&& launches) {
    check(cudaEventRecord(start_, nullptr), "cudaEventRecord");
    launches();
    check(cudaEventRecord(stop_, nullptr), "cudaEventRecord");
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms * 1e-3;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// tilesim's float32 values of an op operand into a device buffer of storage S: as they are for float32;
// for a half dtype converted to 16-bit on the host first (exactly: the values are the dtype's), as the
// tensors a half model holds, before any timing.
template <class S>
void upload_values(const DeviceBuffer& buffer, const std::vector<float>& values) {
  if constexpr (std::is_same_v<S, Float32Storage>)
    buffer.upload(values);
  else
    buffer.upload(stored<S>(values));
}
// The device's output in storage S back into float32 values (widened exactly), for verification.
template <class S>
void download_values(const DeviceBuffer& buffer, std::vector<float>& values) {
  if constexpr (std::is_same_v<S, Float32Storage>) {
    buffer.download(values);
  } else {
    std::vector<typename S::type> held(values.size());
    buffer.download(held);
    values = widened<S>(held);
  }
}

class CudaBackend : public Backend {
 public:
  CudaBackend(CudaTiming timing, std::string device_name) : timing_(timing), device_name_(std::move(device_name)) {}
  std::string name() const override { return timing_ == CudaTiming::kernel ? "cuda" : "cuda:per-call"; }
  const TensorValues* computed_outputs() const override { return &outputs_; }

  // One op in its dtype's kernels; the index type is no dtype an op computes in. A cast reads its input
  // in the input tensor's dtype and writes the op's.
  cpu::TimingStats time_op(const Op& op, const Operands& o, std::vector<float>& output, Events& events, const RunOptions& options) {
    if (op.kind == OpKind::cast) {
      switch (op.input_dtype) {
        case DType::float32: return time_cast_from<Float32Storage>(op, o, output, events, options);
        case DType::float16: return time_cast_from<Float16Storage>(op, o, output, events, options);
        case DType::bfloat16: return time_cast_from<BFloat16Storage>(op, o, output, events, options);
        case DType::int32: break;
      }
      throw std::invalid_argument("cuda backend: op '" + op.name + "': a cast from " + to_string(op.input_dtype) + ", not a value dtype");
    }
    switch (op.dtype) {
      case DType::float32: return time_op_in<Float32Storage>(op, o, output, events, options);
      case DType::float16: return time_op_in<Float16Storage>(op, o, output, events, options);
      case DType::bfloat16: return time_op_in<BFloat16Storage>(op, o, output, events, options);
      case DType::int32: break;
    }
    throw std::invalid_argument("cuda backend: op '" + op.name + "': dtype " + to_string(op.dtype) + " is not a value dtype");
  }

  template <class In>
  cpu::TimingStats time_cast_from(const Op& op, const Operands& o, std::vector<float>& output, Events& events, const RunOptions& options) {
    switch (op.dtype) {
      case DType::float32: return time_cast<In, Float32Storage>(op, o, output, events, options);
      case DType::float16: return time_cast<In, Float16Storage>(op, o, output, events, options);
      case DType::bfloat16: return time_cast<In, BFloat16Storage>(op, o, output, events, options);
      case DType::int32: break;
    }
    throw std::invalid_argument("cuda backend: op '" + op.name + "': a cast to " + to_string(op.dtype) + ", not a value dtype");
  }

  // A cast: the input uploaded in its storage In, the output in Out.
  template <class In, class Out>
  cpu::TimingStats time_cast(const Op& op, const Operands& o, std::vector<float>& output, Events& events, const RunOptions& options) {
    const DeviceBuffer d_input(o.input->size() * sizeof(typename In::type)), d_output(output.size() * sizeof(typename Out::type));
    upload_values<In>(d_input, *o.input);
    upload_values<Out>(d_output, output);  // NaN: an element the kernel never wrote fails verification
    const float scale = op.cast_scale();
    const std::int64_t count = static_cast<std::int64_t>(output.size());
    const cpu::TimingStats stats = time_launches(
        [&] { launch_cast<In, Out>(d_input.as<typename In::type>(), scale, count, d_output.as<typename Out::type>(), nullptr); }, events,
        options);
    download_values<Out>(d_output, output);
    return stats;
  }

  // Warm-up calls of `launches`, then the timed repeats: CUDA events around them (kernel timing), or the
  // host clock around the launches and a device synchronisation (per-call).
  template <class F>
  cpu::TimingStats time_launches(F&& launches, Events& events, const RunOptions& options) {
    std::vector<double> samples_s;
    for (int i = 0; i < options.warmup + options.repeats; ++i) {
      double t;
      if (timing_ == CudaTiming::kernel) {
        t = events.time(launches);
      } else {
        const auto start = std::chrono::steady_clock::now();
        launches();
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      if (i >= options.warmup) samples_s.push_back(t);
    }
    return cpu::summarise(std::move(samples_s), options.warmup);
  }

  // Uploads one op's operands, times its kernels (warm-up, then repeats) and downloads the output. S is
  // the storage of the op's value operands and output; indices, scratch and a loss's row weights keep
  // their own types.
  template <class S>
  cpu::TimingStats time_op_in(const Op& op, const Operands& o, std::vector<float>& output, Events& events, const RunOptions& options) {
    using Value = typename S::type;
    const OpShape& s = op.shape;
    // Every operand the op has goes to the device (check_operands has vetted their sizes and indices);
    // mean and max scatters get their per-row counts as scratch.
    const auto bytes_of = [](const auto* values) { return values ? values->size() * sizeof((*values)[0]) : std::size_t{0}; };
    const auto value_bytes_of = [](const std::vector<float>* values) { return values ? values->size() * sizeof(Value) : std::size_t{0}; };
    const DeviceBuffer d_input(value_bytes_of(o.input)), d_indices(bytes_of(o.indices)), d_weight(value_bytes_of(o.weight)),
        d_bias(value_bytes_of(o.bias)), d_output(output.size() * sizeof(Value));
    const bool counted = op.kind == OpKind::scatter_mean || op.kind == OpKind::scatter_max;
    const DeviceBuffer d_counts(counted ? static_cast<std::size_t>(s.num_outputs) * sizeof(std::int32_t) : 0);
    // The loss's per-row scratch, and with row weights the weights and their sum on the device; Adam's
    // step number, read on the host (it sets the bias corrections).
    const bool is_loss = op.kind == OpKind::loss || op.kind == OpKind::loss_grad;
    const bool weighted = is_loss && o.loss_row_weights() != nullptr;
    const DeviceBuffer d_row_loss(op.kind == OpKind::loss ? static_cast<std::size_t>(s.num_inputs) * sizeof(float) : 0);
    const DeviceBuffer d_row_weights(weighted ? bytes_of(o.loss_row_weights()) : 0), d_weight_sum(weighted ? sizeof(float) : 0);
    const bool column_sums = op.kind == OpKind::sum_to && s.other_rows == 1;
    const DeviceBuffer d_partial(column_sums ? static_cast<std::size_t>(sum_to_chunks(s.num_inputs) * s.num_features) * sizeof(float) : 0);
    const double step = op.kind == OpKind::optimizer_step && o.step_number() != nullptr ? static_cast<double>((*o.step_number())[0]) : 1.0;
    if (o.input) upload_values<S>(d_input, *o.input);
    if (o.indices) d_indices.upload(*o.indices);
    if (o.weight) upload_values<S>(d_weight, *o.weight);
    if (o.bias) upload_values<S>(d_bias, *o.bias);
    if (weighted) d_row_weights.upload(*o.loss_row_weights());  // float32 in every dtype
    const float* row_weights = weighted ? d_row_weights.as<float>() : nullptr;
    float* weight_sum = weighted ? d_weight_sum.as<float>() : nullptr;
    upload_values<S>(d_output, output);  // NaN: an element the kernel never wrote fails verification
    const Value* in = d_input.as<Value>();
    const Value* weight = d_weight.as<Value>();
    const std::int32_t* idx = d_indices.as<std::int32_t>();
    Value* out = d_output.as<Value>();
    auto launches = [&] {
      switch (op.kind) {
        case OpKind::gather: launch_gather<S>(in, s.num_features, idx, s.num_outputs, out, nullptr); break;
        case OpKind::scatter_add:
        case OpKind::scatter_mean:
        case OpKind::scatter_max:
          launch_scatter<S>(op.kind == OpKind::scatter_add ? DeviceReduce::sum : op.kind == OpKind::scatter_mean ? DeviceReduce::mean : DeviceReduce::max,
                            in, s.num_inputs, s.num_features, idx, s.num_outputs, out, d_counts.as<std::int32_t>(), nullptr);
          break;
        case OpKind::degree_count: launch_degree<S>(idx, s.num_inputs, s.num_outputs, out, nullptr); break;
        case OpKind::matmul:
          if (op.transpose_input || op.transpose_weight) {
            launch_matmul_transposed<S>(in, op.transpose_input, weight, op.transpose_weight, s.num_inputs, s.num_features, s.out_features, out,
                                        nullptr);
            break;
          }
          launch_matmul<S>(in, weight, s.num_inputs, s.num_features, s.out_features, o.bias ? d_bias.as<Value>() : nullptr, out, nullptr);
          break;
        case OpKind::segment_matmul:
          if (op.transpose_input) {
            launch_segment_matmul_transposed_input<S>(in, s.num_features, idx, s.num_segments, weight, s.out_features, out, nullptr);
            break;
          }
          if (op.transpose_weight) {
            launch_segment_matmul_transposed_weight<S>(in, s.num_inputs, s.num_features, idx, s.num_segments, weight, s.out_features, out,
                                                       nullptr);
            break;
          }
          launch_segment_matmul<S>(in, s.num_inputs, s.num_features, idx, s.num_segments, weight, s.out_features, out, nullptr);
          break;
        case OpKind::unary: launch_unary<S>(op.unary, op.scalar, in, s.num_inputs * s.num_features, out, nullptr); break;
        case OpKind::binary:
          launch_binary<S>(op.binary, in, s.num_inputs, s.num_features, weight, s.other_rows, s.other_groups, out, nullptr);
          break;
        case OpKind::unary_grad: launch_unary_grad<S>(op.unary, op.scalar, in, weight, s.num_inputs * s.num_features, out, nullptr); break;
        case OpKind::sum_to:
          launch_sum_to<S>(in, s.num_inputs, s.num_features, s.other_rows, s.other_groups, d_partial.as<float>(), out, nullptr);
          break;
        case OpKind::loss:
          launch_loss<S>(op.loss, in, s.num_inputs, s.num_features, idx, weight, row_weights, d_row_loss.as<float>(), weight_sum, out, nullptr);
          break;
        case OpKind::loss_grad:
          launch_loss_grad<S>(op.loss, in, s.num_inputs, s.num_features, idx, weight, row_weights, weight_sum, out, nullptr);
          break;
        case OpKind::optimizer_step:
          launch_optimizer_step<S>(op.optimizer, step, in, weight, o.bias ? d_bias.as<Value>() : nullptr, s.num_inputs * s.num_features, out,
                                   nullptr);
          break;
        case OpKind::cast: break;  // time_cast, with its two storages
      }
    };
    const cpu::TimingStats stats = time_launches(launches, events, options);
    download_values<S>(d_output, output);
    return stats;
  }

  BackendResult run(const OpGraph& graph, const TensorValues& inputs, const RunOptions& options) override {
    const auto wall_start = std::chrono::steady_clock::now();
    BackendResult result;
    result.backend = name();
    result.kind = ResultKind::measured;
    result.machine = device_name_;
    Events events;
    run_measured_ops(
        graph, inputs, "cuda backend",
        [&](const Op& op, const Operands& operands, std::vector<float>& output) { return time_op(op, operands, output, events, options); },
        result, outputs_, /*runs_training=*/true);
    int runtime_version = 0, driver_version = 0;
    cudaRuntimeGetVersion(&runtime_version);
    cudaDriverGetVersion(&driver_version);
    result.host = {{"device", device_name_},
                   {"cuda_runtime_version", runtime_version},
                   {"cuda_driver_version", driver_version},
                   {"timing_mode", timing_ == CudaTiming::kernel ? "kernel: CUDA events around each op's kernels, data on the device"
                                                                 : "per-call: host clock around the launches and cudaDeviceSynchronize"},
                   {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count()}};
    return result;
  }

 private:
  CudaTiming timing_;
  std::string device_name_;
  TensorValues outputs_;
};

}  // namespace

bool built_in() { return true; }

std::string description() {
  return std::string("CUDA ") + TILESIM_CUDA_VERSION + " kernels for sm_" + TILESIM_CUDA_ARCHITECTURES + "; needs an NVIDIA GPU";
}

DeviceProbe probe_device() {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0)
    return {false, std::string("no CUDA device present (cudaGetDeviceCount: ") +
                       (e != cudaSuccess ? std::string(cudaGetErrorName(e)) + ", " + cudaGetErrorString(e) : "0 devices") + ")"};
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  return {true, std::string(prop.name) + " (device 0 of " + std::to_string(devices) + ")"};
}

std::unique_ptr<Backend> make_backend(CudaTiming timing) {
  const DeviceProbe device = probe_device();
  if (!device.present) {
    throw InputError("backend cuda: " + device.text +
                     ". The CUDA kernels are built but need an NVIDIA GPU and its driver; for modeled GPU times use gpu-model:MACHINE");
  }
  return std::make_unique<CudaBackend>(timing, device.text);
}

}  // namespace tilesim::kernels::cuda
