// The gather's streaming paths (kernels/cpu/gather_scatter.cpp): outputs past the streaming threshold are
// written with non-temporal stores whether or not they start on a cache line (a std::vector's large
// buffer starts 16 bytes into a page, as every output the backends time does). Every row must arrive
// bit for bit, for every start offset, row width and thread count, and nothing outside the output may
// be written.
#include <catch2/catch.hpp>

#include <omp.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/gather_scatter.hpp"

namespace cpu = tilesim::kernels::cpu;

namespace {

// Larger than the kernel's streaming threshold (16 MiB of output).
constexpr std::int64_t kStreamedOutputBytes = 17 * 1024 * 1024;

struct AlignedDelete {
  void operator()(float* p) const { ::operator delete[](p, std::align_val_t{64}); }
};
using AlignedFloats = std::unique_ptr<float[], AlignedDelete>;

AlignedFloats aligned_floats(std::size_t count) {
  return AlignedFloats(static_cast<float*>(::operator new[](count * sizeof(float), std::align_val_t{64})));
}

}  // namespace

TEST_CASE("gathers past the streaming threshold are exact at every output alignment", "[kernels][cpu][gather][unit]") {
  const int threads_before = omp_get_max_threads();
  std::mt19937 rng(17);
  for (const std::int64_t features : {16, 48, 64, 512}) {
    const std::int64_t row_bytes = features * 4;
    const std::int64_t num_rows = 3001;
    const std::int64_t num_lookups = kStreamedOutputBytes / row_bytes + 37;  // not a whole number of lines per thread
    std::vector<float> table(static_cast<std::size_t>(num_rows * features));
    // Distinct bit patterns, a NaN payload and -0 among them: a copy of bits, not of values.
    for (std::size_t i = 0; i < table.size(); ++i) {
      const std::uint32_t bits = static_cast<std::uint32_t>(i) * 2654435761u;
      std::memcpy(&table[i], &bits, 4);
    }
    std::vector<std::int32_t> indices(static_cast<std::size_t>(num_lookups));
    std::uniform_int_distribution<std::int32_t> row(0, static_cast<std::int32_t>(num_rows - 1));
    for (auto& i : indices) i = row(rng);
    const std::size_t out_floats = static_cast<std::size_t>(num_lookups * features);
    constexpr std::size_t kGuardFloats = 32;  // sentinels on both sides
    AlignedFloats buffer = aligned_floats(out_floats + 2 * kGuardFloats);
    for (const int threads : {1, 2, 3}) {
      for (const std::size_t offset_floats : {0, 1, 4, 12, 15}) {
        INFO("features " << features << ", output " << 4 * offset_floats << " bytes past a cache line, " << threads
                         << " threads");
        float* out = buffer.get() + kGuardFloats + offset_floats;
        std::memset(buffer.get(), 0xA5, (out_floats + 2 * kGuardFloats) * sizeof(float));
        omp_set_num_threads(threads);
        cpu::gather_f32(table.data(), num_rows, features, indices.data(), num_lookups, out);
        omp_set_num_threads(threads_before);
        std::int64_t wrong_rows = 0, first_wrong = -1;
        for (std::int64_t i = 0; i < num_lookups; ++i)
          if (std::memcmp(out + i * features, table.data() + std::int64_t{indices[static_cast<std::size_t>(i)]} * features,
                          static_cast<std::size_t>(row_bytes)) != 0) {
            if (first_wrong < 0) first_wrong = i;
            ++wrong_rows;
          }
        INFO("first wrong row " << first_wrong);
        CHECK(wrong_rows == 0);
        // Nothing before or after the output was written.
        const auto* bytes = reinterpret_cast<const unsigned char*>(buffer.get());
        const std::size_t before = (kGuardFloats + offset_floats) * sizeof(float);
        const std::size_t after_begin = before + out_floats * sizeof(float);
        const std::size_t total = (out_floats + 2 * kGuardFloats) * sizeof(float);
        bool guards_intact = true;
        for (std::size_t b = 0; b < before; ++b) guards_intact = guards_intact && bytes[b] == 0xA5;
        for (std::size_t b = after_begin; b < total; ++b) guards_intact = guards_intact && bytes[b] == 0xA5;
        CHECK(guards_intact);
      }
    }
  }
  CHECK(omp_get_max_threads() == threads_before);
}
