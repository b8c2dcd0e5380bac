#include "kernels/cpu/degree_count.hpp"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu/parallel.hpp"

namespace tilesim::kernels::cpu {
namespace {

// Per-thread integer histograms cost a zeroing and a combining pass over threads x num_outputs counts;
// they pay off while the indices outnumber the copied counts, and are refused beyond this size, where
// atomic increments of one shared histogram are the cheaper overhead.
constexpr std::int64_t kHistogramsMaxBytes = 64 * 1024 * 1024;

}  // namespace

void degree_count_f32(const std::int32_t* indices, std::int64_t count, std::int64_t num_outputs, float* out) {
  const int threads = parallel::threads_for(4 * count + 4 * num_outputs);
  // Counts are kept as integers (exact) and converted once; a float count would stop at 2^24.
  if (threads == 1) {
    auto* counts = parallel::scratch().get<std::int32_t>(parallel::Scratch::counts, static_cast<std::size_t>(num_outputs));
    std::fill_n(counts, num_outputs, 0);
    for (std::int64_t i = 0; i < count; ++i) ++counts[indices[i]];
    for (std::int64_t n = 0; n < num_outputs; ++n) out[n] = static_cast<float>(counts[n]);
    return;
  }
  const bool histograms = count >= num_outputs && 4 * num_outputs * threads <= kHistogramsMaxBytes;
  if (histograms) {
    std::vector<std::int32_t*> per_thread(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
    {
      const int parts = omp_get_num_threads(), part = omp_get_thread_num();
      std::int32_t* counts = parallel::scratch().get<std::int32_t>(parallel::Scratch::counts, static_cast<std::size_t>(num_outputs));
      per_thread[static_cast<std::size_t>(part)] = counts;
      std::fill_n(counts, num_outputs, 0);
      const std::int64_t end = parallel::part_begin(count, parts, part + 1);
      for (std::int64_t i = parallel::part_begin(count, parts, part); i < end; ++i) ++counts[indices[i]];
#pragma omp barrier
      const std::int64_t row_end = parallel::part_begin(num_outputs, parts, part + 1);
      for (std::int64_t n = parallel::part_begin(num_outputs, parts, part); n < row_end; ++n) {
        std::int64_t total = 0;
        for (int t = 0; t < parts; ++t) total += per_thread[static_cast<std::size_t>(t)][n];
        out[n] = static_cast<float>(total);
      }
    }
    return;
  }
  auto* counts = parallel::scratch().get<std::int32_t>(parallel::Scratch::other, static_cast<std::size_t>(num_outputs));
  std::fill_n(counts, num_outputs, 0);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
#pragma omp atomic
    ++counts[indices[i]];
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t n = 0; n < num_outputs; ++n) out[n] = static_cast<float>(counts[n]);
}

}  // namespace tilesim::kernels::cpu
