#include "kernels/cpu/cpu_backend.hpp"

#include <omp.h>

#include <chrono>
#include <functional>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <thread>

#include "kernels/cpu/gather_scatter.hpp"
#include "kernels/cpu/timing.hpp"
#include "kernels/reference/reference.hpp"

namespace tilesim::kernels::cpu {
namespace {

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) return line.substr(start);
  }
  return "unknown CPU";
}

// The 1-minute load average: other work on the host stalls the OpenMP team (a busy core can hold a
// worker for a whole scheduler slice), so it says how far the timings can be trusted. -1 when unknown.
double load_average_1min() {
  std::ifstream loadavg("/proc/loadavg");
  double load = -1;
  loadavg >> load;
  return loadavg ? load : -1;
}

[[noreturn]] void bad_values(const Op& op, const std::string& what) {
  throw std::invalid_argument("cpu backend: op '" + op.name + "': " + what);
}

}  // namespace

std::string host_description() {
  return cpu_model_name() + ", " + std::to_string(std::thread::hardware_concurrency()) + " logical CPUs, " +
         std::to_string(omp_get_max_threads()) + " OpenMP threads";
}

BackendResult CpuBackend::run(const OpGraph& graph, const TensorValues& inputs, const RunOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  outputs_ = TensorValues{};
  BackendResult result;
  result.backend = name();
  result.kind = ResultKind::measured;
  result.machine = host_description();

  for (const Op& op : graph.ops) {
    if (op.dtype != DType::float32) bad_values(op, "dtype " + to_string(op.dtype) + " is not implemented on the CPU");
    const bool chained = outputs_.has(op.input) || outputs_.has(op.indices);
    const std::vector<float>& input = outputs_.has(op.input) ? outputs_.f32(op.input) : inputs.f32(op.input);
    const std::vector<std::int32_t>& indices = outputs_.has(op.indices) ? outputs_.i32(op.indices) : inputs.i32(op.indices);
    const OpShape& shape = op.shape;
    if (static_cast<std::int64_t>(input.size()) != shape.num_inputs * shape.num_features)
      bad_values(op, "input has " + std::to_string(input.size()) + " values, expected " +
                         std::to_string(shape.num_inputs) + " x " + std::to_string(shape.num_features));
    if (static_cast<std::int64_t>(indices.size()) != op.num_indices())
      bad_values(op, "indices has " + std::to_string(indices.size()) + " values, expected " + std::to_string(op.num_indices()));
    // Checked once here so the kernels can trust their indices: one bad one would write outside the output.
    for (std::size_t i = 0; i < indices.size(); ++i)
      if (indices[i] < 0 || indices[i] >= op.index_range())
        bad_values(op, "indices[" + std::to_string(i) + "] = " + std::to_string(indices[i]) + " is outside [0, " +
                           std::to_string(op.index_range()) + ")");

    // NaN where the kernel must write: an element no call wrote fails verification instead of passing as 0.
    std::vector<float> output(static_cast<std::size_t>(shape.num_outputs * shape.num_features),
                              std::numeric_limits<float>::quiet_NaN());
    std::function<void()> call;
    if (op.kind == OpKind::gather)
      call = [&] { gather_f32(input.data(), shape.num_inputs, shape.num_features, indices.data(), shape.num_outputs, output.data()); };
    else
      call = [&] { scatter_add_f32(input.data(), shape.num_inputs, shape.num_features, indices.data(), shape.num_outputs, output.data()); };
    const TimingStats stats = time_calls(call, options.warmup, options.repeats);

    reference::Verification verification;
    if (chained) {
      // verify() reads both operands from one TensorValues; gather them when they come from different places.
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

  result.host = {{"cpu_model", cpu_model_name()},
                 {"logical_cpus", std::thread::hardware_concurrency()},
                 {"omp_max_threads", omp_get_max_threads()},
                 {"load_average_1min", load_average_1min()},
                 {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count()}};
  return result;
}

}  // namespace tilesim::kernels::cpu
