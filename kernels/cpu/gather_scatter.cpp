// Float32 gather and scatter-add on the host CPU: OpenMP across cores, inner loops over features left to
// the compiler's vectoriser (the target builds with -O3 -march=native; __restrict lets it).
#include "kernels/cpu/gather_scatter.hpp"

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <memory>

namespace tilesim::kernels::cpu {
namespace {

// A call that moves fewer bytes than this runs on the calling thread. Forking and joining the OpenMP
// team costs ~1.1 us on the 2-core development host, while one core moves cache-resident rows at
// ~80 GB/s: below ~256 KiB the second thread cannot win back its start-up.
constexpr std::int64_t kParallelMinBytes = 256 * 1024;

// Per-thread partial outputs for scatter-add are used only while one fits in a per-core L2, where
// accumulating into it is cheap; beyond that, zeroing and reducing the copies would cost more than the
// owner-computes path's repeated index scans.
constexpr std::int64_t kPartialMaxBytes = 256 * 1024;

// Thread boundaries inside a flat float array fall on multiples of 16 floats (64 bytes), so with a
// cache-aligned array no line is written by two threads.
constexpr std::int64_t kFloatsPerCacheLine = 16;

// Scratch for the per-thread partial outputs, kept by the calling thread between calls so repeated
// (timed) calls do not pay page faults for fresh buffers; at most (threads - 1) x kPartialMaxBytes.
class Scratch {
 public:
  float* floats(std::size_t count) {
    if (count > capacity_floats_) {
      buffer_.reset();  // free first, so the old and new buffers are never held together
      buffer_ = std::make_unique<float[]>(count);
      capacity_floats_ = count;
    }
    return buffer_.get();
  }

 private:
  std::unique_ptr<float[]> buffer_;
  std::size_t capacity_floats_ = 0;
};

thread_local Scratch scratch;

// Start of part `part` of `parts` near-equal parts of [0, n).
std::int64_t part_begin(std::int64_t n, int parts, int part) { return n / parts * part + std::min<std::int64_t>(n % parts, part); }

// As part_begin, rounded down to a cache line (the last part still ends at n).
std::int64_t part_begin_aligned(std::int64_t n, int parts, int part) {
  if (part == parts) return n;
  return part_begin(n, parts, part) / kFloatsPerCacheLine * kFloatsPerCacheLine;
}

void add_row(const float* __restrict from, std::int64_t num_features, float* __restrict to) {
  for (std::int64_t f = 0; f < num_features; ++f) to[f] += from[f];
}

void copy_floats(const float* __restrict from, std::int64_t count, float* __restrict to) {
  for (std::int64_t k = 0; k < count; ++k) to[k] = from[k];
}

void zero_floats(float* out, std::int64_t count) { std::fill_n(out, count, 0.0f); }

// Output elements [e_begin, e_end) of a gather, which may start and end inside a row.
void gather_range(const float* table, std::int64_t num_features, const std::int32_t* indices, float* out,
                  std::int64_t e_begin, std::int64_t e_end) {
  if (e_begin >= e_end) return;
  std::int64_t lookup = e_begin / num_features;
  std::int64_t feature = e_begin - lookup * num_features;
  for (std::int64_t e = e_begin; e < e_end; ++lookup, feature = 0) {
    const std::int64_t count = std::min(num_features - feature, e_end - e);
    copy_floats(table + std::int64_t{indices[lookup]} * num_features + feature, count, out + e);
    e += count;
  }
}

// Plain loop in message order: the small-call path, which the owner-computes path reproduces bit for bit.
void scatter_add_serial(const float* src, std::int64_t num_messages, std::int64_t num_features,
                        const std::int32_t* indices, std::int64_t num_outputs, float* out) {
  zero_floats(out, num_outputs * num_features);
  for (std::int64_t i = 0; i < num_messages; ++i)
    add_row(src + i * num_features, num_features, out + std::int64_t{indices[i]} * num_features);
}

// Many messages into a small output: each thread sums a contiguous share of the messages into its own
// copy of the output (thread 0 straight into `out`), then the copies are added element-wise in thread
// order. The messages are what is split, so indices crowding into a few rows still spread over all
// threads; the result is the same bits for a given thread count.
void scatter_add_partials(const float* src, std::int64_t num_messages, std::int64_t num_features,
                          const std::int32_t* indices, std::int64_t num_outputs, float* out, int max_threads) {
  const std::int64_t out_floats = num_outputs * num_features;
  float* partials = scratch.floats(static_cast<std::size_t>(max_threads - 1) * static_cast<std::size_t>(out_floats));
#pragma omp parallel num_threads(max_threads)
  {
    const int threads = omp_get_num_threads();
    const int thread = omp_get_thread_num();
    float* acc = thread == 0 ? out : partials + (thread - 1) * out_floats;
    zero_floats(acc, out_floats);
    const std::int64_t end = part_begin(num_messages, threads, thread + 1);
    for (std::int64_t i = part_begin(num_messages, threads, thread); i < end; ++i)
      add_row(src + i * num_features, num_features, acc + std::int64_t{indices[i]} * num_features);
#pragma omp barrier
    const std::int64_t e_begin = part_begin_aligned(out_floats, threads, thread);
    const std::int64_t e_end = part_begin_aligned(out_floats, threads, thread + 1);
    for (int other = 1; other < threads; ++other)
      add_row(partials + (other - 1) * out_floats + e_begin, e_end - e_begin, out + e_begin);
  }
}

// Large outputs: each thread owns a contiguous block of output rows. It zeroes the block in one sweep,
// then scans all the indices and adds the messages that land in its block, in message order (so the
// bits equal the serial loop's). Every thread reads every index: 4 bytes per message beside the
// 4 x num_features bytes of the rows it adds, cheap at the thread counts of one host. Measured on the
// hydronet points with 32768 output rows it ran about 2-6x faster than bucketing the messages by row first
// (a counting sort), whose serial pass and row-by-row zeroing cost more than they saved. Rows are split
// evenly, so indices crowding into one block (all equal, say) are summed by one thread.
void scatter_add_owner_computes(const float* src, std::int64_t num_messages, std::int64_t num_features,
                                const std::int32_t* indices, std::int64_t num_outputs, float* out, int max_threads) {
#pragma omp parallel num_threads(max_threads)
  {
    const int threads = omp_get_num_threads();
    const int thread = omp_get_thread_num();
    const std::int64_t r_begin = part_begin(num_outputs, threads, thread);
    const std::int64_t r_end = part_begin(num_outputs, threads, thread + 1);
    zero_floats(out + r_begin * num_features, (r_end - r_begin) * num_features);
    for (std::int64_t i = 0; i < num_messages; ++i) {
      const std::int64_t r = indices[i];
      if (r >= r_begin && r < r_end) add_row(src + i * num_features, num_features, out + r * num_features);
    }
  }
}

}  // namespace

void gather_f32(const float* table, std::int64_t /*num_rows*/, std::int64_t num_features, const std::int32_t* indices,
                std::int64_t num_lookups, float* out) {
  const std::int64_t out_floats = num_lookups * num_features;
  const std::int64_t bytes_moved = num_lookups * static_cast<std::int64_t>(sizeof(std::int32_t)) +
                                   2 * out_floats * static_cast<std::int64_t>(sizeof(float));
  const int max_threads = omp_get_max_threads();
  // A plain branch rather than the parallel region's if() clause: libgomp still sets up a one-thread team
  // for if(false), ~0.25 us on the development host, five times a whole 32 x 16 gather (~0.05 us).
  if (max_threads == 1 || bytes_moved < kParallelMinBytes) {
    gather_range(table, num_features, indices, out, 0, out_floats);
    return;
  }
  // Threads split the flat output, not the lookups, so a few very wide rows still spread over all cores.
#pragma omp parallel num_threads(max_threads)
  {
    const int threads = omp_get_num_threads();
    const int thread = omp_get_thread_num();
    gather_range(table, num_features, indices, out, part_begin_aligned(out_floats, threads, thread),
                 part_begin_aligned(out_floats, threads, thread + 1));
  }
}

void scatter_add_f32(const float* src, std::int64_t num_messages, std::int64_t num_features,
                     const std::int32_t* indices, std::int64_t num_outputs, float* out) {
  const std::int64_t out_floats = num_outputs * num_features;
  const std::int64_t bytes_moved =
      num_messages * (static_cast<std::int64_t>(sizeof(std::int32_t)) + num_features * static_cast<std::int64_t>(sizeof(float))) +
      out_floats * static_cast<std::int64_t>(sizeof(float));
  const int max_threads = omp_get_max_threads();
  if (max_threads == 1 || bytes_moved < kParallelMinBytes) {  // as in gather_f32: no OpenMP call at all
    scatter_add_serial(src, num_messages, num_features, indices, num_outputs, out);
    return;
  }
  // Private copies pay off when the output is small and there are at least as many messages as rows
  // across all copies (else zeroing and reducing the copies costs more than the messages themselves);
  // otherwise each thread owns output rows.
  const bool use_partials = out_floats * static_cast<std::int64_t>(sizeof(float)) <= kPartialMaxBytes &&
                            num_outputs * max_threads <= num_messages;
  if (use_partials)
    scatter_add_partials(src, num_messages, num_features, indices, num_outputs, out, max_threads);
  else
    scatter_add_owner_computes(src, num_messages, num_features, indices, num_outputs, out, max_threads);
}

}  // namespace tilesim::kernels::cpu
