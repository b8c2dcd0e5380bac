#include "kernels/cpu/matmul_peak.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "common/error.hpp"
#include "kernels/cpu/matmul.hpp"

namespace tilesim::kernels::cpu {
namespace {

template <class T>
MatmulPeak measure(std::int64_t size, int trials) {
  const auto count = static_cast<std::size_t>(size * size);
  // Values in [-1, 1) with a short period: no denormals, no overflow, nothing the kernel could skip.
  std::vector<T> a(count), b(count), c(count);
  for (std::size_t i = 0; i < count; ++i) {
    a[i] = from_float<T>(static_cast<float>(i % 61) / 30.5f - 1.0f);
    b[i] = from_float<T>(static_cast<float>(i % 53) / 26.5f - 1.0f);
  }
  const double flops = 2.0 * static_cast<double>(size) * static_cast<double>(size) * static_cast<double>(size);
  matmul<T>(a.data(), b.data(), size, size, size, nullptr, c.data());
  MatmulPeak p;
  nlohmann::json rates = nlohmann::json::array();
  for (int t = 0; t < trials; ++t) {
    const auto t0 = std::chrono::steady_clock::now();
    matmul<T>(a.data(), b.data(), size, size, size, nullptr, c.data());
    const double time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double rate = flops / time_s;
    p.flops_per_s = std::max(p.flops_per_s, rate);
    rates.push_back(rate);
  }
  p.instruction_set = matmul_instruction_set<T>();
  p.kernel = matmul_kernel<T>();
  p.details = {{"kernel", std::to_string(size) + " x " + std::to_string(size) + " @ " + std::to_string(size) + " x " +
                              std::to_string(size) + " " + storage_name<T>() + " matmul through " + p.kernel +
                              ", float32 accumulation, 2 m k n FLOPs counted"},
               {"instruction_set", p.instruction_set},
               {"size", size},
               {"trials_flops_per_s", rates},
               {"checksum", static_cast<double>(to_float(c[count / 2]))}};
  return p;
}

}  // namespace

MatmulPeak measure_matmul_peak(const std::string& dtype, std::int64_t size, int trials) {
  if (size < 1 || trials < 1)
    throw InputError("measure_matmul_peak: size " + std::to_string(size) + " and trials " + std::to_string(trials) +
                     " must both be at least 1");
  if (dtype == "float32") return measure<float>(size, trials);
  if (dtype == "float16") return measure<Float16>(size, trials);
  if (dtype == "bfloat16") return measure<BFloat16>(size, trials);
  throw InputError("measure_matmul_peak: dtype '" + dtype + "' is not one of float32, float16, bfloat16");
}

}  // namespace tilesim::kernels::cpu
