// The cuda backend's host side: device memory, CUDA-event timing and verification. Plain C++ against
// the CUDA runtime API; the kernels themselves are in cuda_kernels.cu.
#include "kernels/cuda/cuda_backend.hpp"

#include <cuda_runtime_api.h>

#include <chrono>
#include <limits>
#include <stdexcept>
#include <vector>

#include "common/error.hpp"
#include "kernels/cpu/timing.hpp"
#include "kernels/cuda/cuda_launch.hpp"
#include "kernels/reference/reference.hpp"

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

class CudaBackend : public Backend {
 public:
  CudaBackend(CudaTiming timing, std::string device_name) : timing_(timing), device_name_(std::move(device_name)) {}
  std::string name() const override { return timing_ == CudaTiming::kernel ? "cuda" : "cuda:per-call"; }
  const TensorValues* computed_outputs() const override { return &outputs_; }

  BackendResult run(const OpGraph& graph, const TensorValues& inputs, const RunOptions& options) override {
    const auto wall_start = std::chrono::steady_clock::now();
    outputs_ = TensorValues{};
    BackendResult result;
    result.backend = name();
    result.kind = ResultKind::measured;
    result.machine = device_name_;
    Events events;
    for (const Op& op : graph.ops) {
      if (op.dtype != DType::float32) throw std::invalid_argument("cuda backend: op '" + op.name + "': dtype " + to_string(op.dtype) + " is not implemented");
      const std::vector<float>& input = outputs_.has(op.input) ? outputs_.f32(op.input) : inputs.f32(op.input);
      const std::vector<std::int32_t>& indices = outputs_.has(op.indices) ? outputs_.i32(op.indices) : inputs.i32(op.indices);
      const OpShape& s = op.shape;
      if (static_cast<std::int64_t>(input.size()) != s.num_inputs * s.num_features ||
          static_cast<std::int64_t>(indices.size()) != op.num_indices())
        throw std::invalid_argument("cuda backend: op '" + op.name + "': values do not match the op's shape");
      for (std::size_t i = 0; i < indices.size(); ++i)
        if (indices[i] < 0 || indices[i] >= op.index_range())
          throw std::invalid_argument("cuda backend: op '" + op.name + "': indices[" + std::to_string(i) + "] = " +
                                      std::to_string(indices[i]) + " is outside [0, " + std::to_string(op.index_range()) + ")");
      std::vector<float> output(static_cast<std::size_t>(s.num_outputs * s.num_features), std::numeric_limits<float>::quiet_NaN());
      const DeviceBuffer d_input(input.size() * sizeof(float)), d_indices(indices.size() * sizeof(std::int32_t)),
          d_output(output.size() * sizeof(float));
      d_input.upload(input);
      d_indices.upload(indices);
      d_output.upload(output);  // NaN: an element the kernel never wrote fails verification
      auto launches = [&] {
        if (op.kind == OpKind::gather)
          launch_gather(d_input.as<float>(), s.num_features, d_indices.as<std::int32_t>(), s.num_outputs, d_output.as<float>(), nullptr);
        else
          launch_scatter(DeviceReduce::sum, d_input.as<float>(), s.num_inputs, s.num_features, d_indices.as<std::int32_t>(), s.num_outputs,
                         d_output.as<float>(), nullptr, nullptr);
      };
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
      const cpu::TimingStats stats = cpu::summarise(std::move(samples_s), options.warmup);
      d_output.download(output);
      const bool chained = outputs_.has(op.input) || outputs_.has(op.indices);
      TensorValues operands;
      if (chained) {
        operands.set_f32(op.input, input);
        operands.set_i32(op.indices, indices);
      }
      const reference::Verification v = reference::verify(op, chained ? operands : inputs, output);
      OpResult row;
      row.op = op.name;
      row.op_kind = op.kind;
      row.shape = s;
      row.dtype = op.dtype;
      row.time_s = stats.median_s;
      row.flops = op.flops();
      row.min_bytes = op.min_bytes();
      row.bytes_by_level = {{"dram_min_bytes", op.min_bytes()}};
      row.verified = v.ok;
      row.verification = v.detail;
      row.timing = stats.to_json();
      result.time_s += row.time_s;
      result.ops.push_back(std::move(row));
      outputs_.set_f32(op.output, std::move(output));
    }
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

std::unique_ptr<Backend> make_backend(CudaTiming timing) {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    throw InputError(std::string("backend cuda: no CUDA device present (cudaGetDeviceCount: ") +
                     (e != cudaSuccess ? std::string(cudaGetErrorName(e)) + ", " + cudaGetErrorString(e) : "0 devices") +
                     "). The CUDA kernels are built but need an NVIDIA GPU and its driver; for modeled GPU times use gpu-model:MACHINE");
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  return std::make_unique<CudaBackend>(timing, std::string(prop.name) + " (device 0 of " + std::to_string(devices) + ")");
}

}  // namespace tilesim::kernels::cuda
