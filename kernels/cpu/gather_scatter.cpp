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
// team costs ~1.3 us on the 2-core development host, while one core moves cache-resident rows at
// ~80 GB/s: below ~256 KiB the second thread cannot win back its start-up.
constexpr std::int64_t kParallelMinBytes = 256 * 1024;

// Per-thread partial outputs for scatter-add are used only while one fits in a per-core L2, where
// accumulating into it is cheap; beyond that, the bucketed path writes each output row once instead.
constexpr std::int64_t kPartialMaxBytes = 256 * 1024;

// Thread boundaries inside a flat float array fall on cache lines, so no line is written by two threads.
constexpr std::int64_t kFloatsPerCacheLine = 16;

// Scratch kept by the calling thread between calls, so repeated (timed) calls do not pay page faults for
// fresh buffers every time; a buffer past kScratchKeepBytes is released after the call instead.
constexpr std::size_t kScratchKeepBytes = std::size_t{64} << 20;

class Scratch {
 public:
  void* get(std::size_t bytes) {
    if (bytes > capacity_bytes_) {
      buffer_.reset();  // free first, so the old and new buffers are never held together
      buffer_ = std::make_unique<std::byte[]>(bytes);
      capacity_bytes_ = bytes;
    }
    return buffer_.get();
  }
  void trim() {
    if (capacity_bytes_ > kScratchKeepBytes) {
      buffer_.reset();
      capacity_bytes_ = 0;
    }
  }

 private:
  std::unique_ptr<std::byte[]> buffer_;
  std::size_t capacity_bytes_ = 0;
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

// Plain loop in message order: the small-call path, and what each bucketed row reproduces bit for bit.
void scatter_add_serial(const float* src, std::int64_t num_messages, std::int64_t num_features,
                        const std::int32_t* indices, std::int64_t num_outputs, float* out) {
  zero_floats(out, num_outputs * num_features);
  for (std::int64_t i = 0; i < num_messages; ++i)
    add_row(src + i * num_features, num_features, out + std::int64_t{indices[i]} * num_features);
}

// Many messages into a small output: each thread sums a contiguous share of the messages into its own
// copy of the output (thread 0 straight into `out`), then the copies are added element-wise in thread
// order. Every thread streams its messages with no bucketing pass; the result is the same bits for a
// given thread count.
void scatter_add_partials(const float* src, std::int64_t num_messages, std::int64_t num_features,
                          const std::int32_t* indices, std::int64_t num_outputs, float* out, int max_threads) {
  const std::int64_t out_floats = num_outputs * num_features;
  auto* partials = static_cast<float*>(
      scratch.get(static_cast<std::size_t>(max_threads - 1) * static_cast<std::size_t>(out_floats) * sizeof(float)));
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

// Large outputs: bucket the messages by destination row (a stable counting sort), then threads take
// contiguous row ranges of equal work and write each output row once, summing its messages in message
// order (so the bits equal the serial loop's). The bucketing pass is serial: O(messages + rows) index
// work, small beside the rows' feature bytes; a single row holding most messages is summed by one thread.
void scatter_add_bucketed(const float* src, std::int64_t num_messages, std::int64_t num_features,
                          const std::int32_t* indices, std::int64_t num_outputs, float* out, int max_threads) {
  auto* row_begin = static_cast<std::int64_t*>(
      scratch.get(static_cast<std::size_t>(num_outputs + 1 + num_messages) * sizeof(std::int64_t)));
  std::int64_t* message_of = row_begin + num_outputs + 1;  // message ids grouped by row, ascending within a row

  std::fill_n(row_begin, num_outputs + 1, std::int64_t{0});
  for (std::int64_t i = 0; i < num_messages; ++i) ++row_begin[indices[i]];
  std::int64_t running = 0;
  for (std::int64_t r = 0; r < num_outputs; ++r) {
    running += row_begin[r];
    row_begin[r] = running;  // end of row r for now
  }
  row_begin[num_outputs] = num_messages;
  // Placing from the last message down turns each row's end into its begin and keeps messages ascending.
  for (std::int64_t i = num_messages - 1; i >= 0; --i) message_of[--row_begin[indices[i]]] = i;

#pragma omp parallel num_threads(max_threads)
  {
    const int threads = omp_get_num_threads();
    const int thread = omp_get_thread_num();
    // Work before row r, in feature rows: messages read plus output rows written; strictly increasing in r.
    const std::int64_t total_work = num_messages + num_outputs;
    auto first_row_with_work_at_least = [&](std::int64_t work) {
      std::int64_t lo = 0, hi = num_outputs;
      while (lo < hi) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        if (row_begin[mid] + mid < work) lo = mid + 1; else hi = mid;
      }
      return lo;
    };
    const std::int64_t r_begin = first_row_with_work_at_least(part_begin(total_work, threads, thread));
    const std::int64_t r_end = thread + 1 == threads ? num_outputs
                                                     : first_row_with_work_at_least(part_begin(total_work, threads, thread + 1));
    for (std::int64_t r = r_begin; r < r_end; ++r) {
      float* row = out + r * num_features;
      const std::int64_t m_begin = row_begin[r], m_end = row_begin[r + 1];
      if (m_begin == m_end) {
        zero_floats(row, num_features);
        continue;
      }
      copy_floats(src + message_of[m_begin] * num_features, num_features, row);
      for (std::int64_t m = m_begin + 1; m < m_end; ++m) add_row(src + message_of[m] * num_features, num_features, row);
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
  // A plain branch rather than the parallel region's if() clause: libgomp still builds a one-thread team
  // for if(false), measured at ~0.4 us here, several times the 32 x 16 gather itself.
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
  // across all copies (else zeroing and reducing the copies costs more than the messages themselves).
  const bool small_output = out_floats * static_cast<std::int64_t>(sizeof(float)) <= kPartialMaxBytes &&
                            num_outputs * max_threads <= num_messages;
  if (small_output)
    scatter_add_partials(src, num_messages, num_features, indices, num_outputs, out, max_threads);
  else
    scatter_add_bucketed(src, num_messages, num_features, indices, num_outputs, out, max_threads);
  scratch.trim();
}

}  // namespace tilesim::kernels::cpu
