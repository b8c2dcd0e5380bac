#include "kernels/cpu/host_calibration.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cmath>
#include <fstream>
#include <memory>
#include <vector>

#include "common/host_info.hpp"

namespace tilesim::cpu_model {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

constexpr std::int64_t MiB = 1024 * 1024;

// Register-resident vectors of the widest size the build targets: with AVX-512, 64 bytes and 12
// independent chains (of 32 registers); otherwise 32 bytes and 10 chains (of 16). Either way more
// chains than FMA latency x FMA pipes (4 x 2 on current x86 cores), so the pipes never wait.
#if defined(__AVX512F__)
constexpr int vector_bytes = 64;
constexpr int chains = 12;
#else
constexpr int vector_bytes = 32;
constexpr int chains = 10;
#endif

// One thread's FMA chains: acc = acc * m + a converges to a / (1 - m) = 1, so no value overflows or
// turns denormal however long it runs. The build contracts a * b + c into one FMA (-ffp-contract=fast
// for this library). Returns a checksum so the work cannot be optimised away.
template <class T>
double fma_chains(std::int64_t iterations) {
  typedef T V __attribute__((vector_size(vector_bytes)));
  constexpr int lanes = vector_bytes / static_cast<int>(sizeof(T));
  V acc[chains], m, a;
  for (int l = 0; l < lanes; ++l) {
    m[l] = static_cast<T>(0.999);
    a[l] = static_cast<T>(0.001);
  }
  for (int c = 0; c < chains; ++c)
    for (int l = 0; l < lanes; ++l) acc[c][l] = static_cast<T>(0.5 + 0.01 * c + 0.001 * l);
  for (std::int64_t i = 0; i < iterations; ++i)
    for (int c = 0; c < chains; ++c) acc[c] = acc[c] * m + a;
  double sum = 0;
  for (int c = 0; c < chains; ++c)
    for (int l = 0; l < lanes; ++l) sum += static_cast<double>(acc[c][l]);
  return sum;
}

struct Trial {
  double seconds = 0;
  double checksum = 0;
};

template <class T>
Trial flops_trial(std::int64_t iterations) {
  Trial t;
  double sum = 0;
  const auto t0 = Clock::now();
#pragma omp parallel reduction(+ : sum)
  sum += fma_chains<T>(iterations);
  t.seconds = seconds_since(t0);
  t.checksum = sum;
  return t;
}

template <class T>
nlohmann::json measure_flops(const CalibrationOptions& o, int threads, double& best_flops_per_s) {
  constexpr int lanes = vector_bytes / static_cast<int>(sizeof(T));
  const double flops_per_iteration = 2.0 * chains * lanes * threads;  // an FMA is two FLOPs
  // Size the trials from a short probe so each lasts about flops_trial_s.
  std::int64_t iterations = 1 << 16;
  double probe = flops_trial<T>(iterations).seconds;
  while (probe < 0.01) {
    iterations *= 4;
    probe = flops_trial<T>(iterations).seconds;
  }
  iterations = std::max<std::int64_t>(1, static_cast<std::int64_t>(static_cast<double>(iterations) * o.flops_trial_s / probe));
  nlohmann::json trials = nlohmann::json::array();
  best_flops_per_s = 0;
  double checksum = 0;
  for (int k = 0; k < o.trials; ++k) {
    const Trial t = flops_trial<T>(iterations);
    const double rate = flops_per_iteration * static_cast<double>(iterations) / t.seconds;
    best_flops_per_s = std::max(best_flops_per_s, rate);
    checksum += t.checksum;
    trials.push_back(rate);
  }
  return {{"kernel", "acc = acc * m + a (fused multiply-add) on " + std::to_string(chains) + " independent " +
                         std::to_string(vector_bytes * 8) + "-bit vectors per thread, 2 FLOPs per element"},
          {"iterations_per_thread", iterations},
          {"threads", threads},
          {"trials_flops_per_s", trials},
          {"checksum", checksum}};
}

// Arrays left uninitialised by the allocator so the OpenMP threads touch (and place) their own pages.
template <class T>
std::unique_ptr<T[]> raw_array(std::int64_t n) {
  return std::unique_ptr<T[]>(new T[static_cast<std::size_t>(n)]);
}

// `min_trial_s`: each trial repeats the triad until it has run this long (0: one pass), so that arrays
// which stay in the caches are timed over many passes rather than one of a few microseconds.
nlohmann::json measure_stream(const CalibrationOptions& o, std::int64_t bytes_per_array, double& best, double min_trial_s = 0) {
  const std::int64_t n = bytes_per_array / static_cast<std::int64_t>(sizeof(double));
  auto a = raw_array<double>(n), b = raw_array<double>(n), c = raw_array<double>(n);
  double* pa = a.get();
  double* pb = b.get();
  double* pc = c.get();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    pa[i] = 0;
    pb[i] = 1;
    pc[i] = 2;
  }
  const double s = 3;
  nlohmann::json trials = nlohmann::json::array();
  best = 0;
  // Passes per trial: enough to last min_trial_s, from the first (untimed) pass's time. The passes run
  // in one parallel region with no barrier between them (each thread's static share is the same every
  // pass, so it only rereads what it wrote): a barrier per pass would cost more than a cache-resident
  // pass takes on a host whose cores are shared.
  std::int64_t passes = 1;
  for (int k = 0; k < o.trials + 1; ++k) {
    const auto t0 = Clock::now();
#pragma omp parallel
    for (std::int64_t pass = 0; pass < passes; ++pass) {
#pragma omp for schedule(static) nowait
      for (std::int64_t i = 0; i < n; ++i) pa[i] = pb[i] + s * pc[i];
    }
    const double elapsed_s = seconds_since(t0);
    const double rate = 3.0 * static_cast<double>(passes * n) * sizeof(double) / elapsed_s;
    if (k == 0 && min_trial_s > 0) passes = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(min_trial_s / std::max(elapsed_s, 1e-9))));
    if (k == 0) continue;  // the first pass also faults the pages in
    best = std::max(best, rate);
    trials.push_back(rate);
  }
  return {{"kernel", "STREAM triad a[i] = b[i] + s * c[i], double, 24 bytes counted per element"},
          {"bytes_per_array", n * static_cast<std::int64_t>(sizeof(double))},
          {"passes_per_trial", passes},
          {"trials_bytes_per_s", trials},
          {"checksum", pa[n / 2]}};
}

nlohmann::json measure_gather(const CalibrationOptions& o, std::int64_t table_bytes, double& best) {
  constexpr std::int64_t row_floats = 16;  // 64 bytes: one cache line, the hydronet's smallest feature size
  constexpr std::int64_t row_bytes = row_floats * static_cast<std::int64_t>(sizeof(float));
  constexpr std::int64_t index_bytes = sizeof(std::int32_t);
  const std::int64_t rows = table_bytes / row_bytes;
  const std::int64_t lookups = rows;
  auto table = raw_array<float>(rows * row_floats), out = raw_array<float>(lookups * row_floats);
  auto index = raw_array<std::int32_t>(lookups);
  float* pt = table.get();
  float* po = out.get();
  std::int32_t* pi = index.get();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < rows * row_floats; ++i) pt[i] = static_cast<float>(i & 1023);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < lookups; ++i) {
    // SplitMix64 of the position: uniform, repeatable and independent of the thread count.
    std::uint64_t x = static_cast<std::uint64_t>(i) + 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    pi[i] = static_cast<std::int32_t>(((x >> 32) * static_cast<std::uint64_t>(rows)) >> 32);
    po[i * row_floats] = 0;
  }
  nlohmann::json trials = nlohmann::json::array();
  best = 0;
  const double bytes = static_cast<double>(lookups) * static_cast<double>(index_bytes + 2 * row_bytes);
  for (int k = 0; k < o.trials + 1; ++k) {
    const auto t0 = Clock::now();
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < lookups; ++i)
      std::memcpy(po + i * row_floats, pt + static_cast<std::int64_t>(pi[i]) * row_floats, row_bytes);
    const double rate = bytes / seconds_since(t0);
    if (k == 0) continue;
    best = std::max(best, rate);
    trials.push_back(rate);
  }
  return {{"kernel", "out[i] = table[index[i]], 64-byte rows, uniform random int32 indices; 4 + 64 + 64 bytes counted per lookup"},
          {"table_bytes", rows * row_bytes},
          {"lookups", lookups},
          {"trials_bytes_per_s", trials},
          {"checksum", static_cast<double>(po[(lookups / 2) * row_floats])}};
}

}  // namespace

std::int64_t last_level_cache_bytes() {
  // sysfs first: it describes the caches this (possibly virtual) machine has; glibc's sysconf reads
  // CPUID, which under a hypervisor can report the whole host socket's cache (384 MiB for 32 MiB here).
  std::int64_t best = 0;
  for (int index = 0; index < 8; ++index) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    std::string text;
    if (!(in >> text) || text.empty()) continue;
    std::int64_t v = std::atoll(text.c_str());
    if (text.back() == 'K') v *= 1024;
    if (text.back() == 'M') v *= MiB;
    best = std::max(best, v);
  }
  if (best > 0) return best;
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    const long v = sysconf(name);
    if (v > 0) return v;
  }
  return 32 * MiB;
}

CalibrationResult calibrate_host(const CalibrationOptions& o) {
  const auto t0 = Clock::now();
  CalibrationResult r;
  r.threads = omp_get_max_threads();
  r.last_level_cache_bytes = last_level_cache_bytes();
  // Four times the last-level cache per array, so nearly every access goes to DRAM; the stream test
  // holds three arrays and the gather test two, so five must fit in half of the memory.
  // At most 512 MiB per array, so the measurement stays a few seconds on hosts with huge caches.
  std::int64_t ws = o.working_set_bytes > 0
                        ? o.working_set_bytes
                        : std::min<std::int64_t>(std::max<std::int64_t>(4 * r.last_level_cache_bytes, 64 * MiB), 512 * MiB);
  const std::int64_t memory = host_physical_memory_bytes();
  if (memory > 0) ws = std::min(ws, memory / 10);
  r.working_set_bytes = ws;

  r.details["stream"] = measure_stream(o, ws, r.stream_bytes_per_s);
  // Three arrays filling a quarter of the last-level cache: room for the other cores' data and the
  // code, and large enough that the inner caches do not hold it all.
  r.llc_working_set_bytes = std::max<std::int64_t>(r.last_level_cache_bytes / 12, 64 * 1024);
  r.details["llc_stream"] = measure_stream(o, r.llc_working_set_bytes, r.llc_stream_bytes_per_s, 0.02);
  r.details["gather"] = measure_gather(o, ws, r.gather_bytes_per_s);
  r.details["float32_flops"] = measure_flops<float>(o, r.threads, r.float32_flops_per_s);
  r.details["float64_flops"] = measure_flops<double>(o, r.threads, r.float64_flops_per_s);
  if (o.matmul_size > 0) {
    for (const char* dtype : {"float32", "bfloat16", "float16"}) {
      r.matmul_peaks[dtype] = kernels::cpu::measure_matmul_peak(dtype, o.matmul_size, o.matmul_trials);
      r.details[std::string("matmul_") + dtype] = r.matmul_peaks[dtype].details;
    }
  }
  r.details["last_level_cache_bytes"] = r.last_level_cache_bytes;
  r.details["trials"] = o.trials;
  r.wall_s = seconds_since(t0);
  r.details["wall_s"] = r.wall_s;
  return r;
}

}  // namespace tilesim::cpu_model
