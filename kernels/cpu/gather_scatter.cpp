// Gather on the host CPU: a copy of rows, done as 64-byte AVX-512 moves, split over OpenMP threads for
// large calls; scatter-add is the sum case of scatter_reduce.cpp's engine.
#include "kernels/cpu/gather_scatter.hpp"

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "kernels/cpu/parallel.hpp"
#include "kernels/cpu/row_ops.hpp"
#include "kernels/cpu/scatter_reduce.hpp"

namespace tilesim::kernels::cpu {
namespace {

constexpr std::int64_t kCacheLineBytes = 64;

// Outputs larger than this are written with non-temporal (streaming) stores: they would not stay in
// the 32 MiB L3 anyway, and a streaming store skips the read-for-ownership of each output line, so
// DRAM carries the output once instead of twice. Below it the output is likely read again soon (the
// next op of a layer) and is better left in cache.
constexpr std::int64_t kStreamingMinBytes = 16 * 1024 * 1024;

// Tables larger than one core's L2 (2 MiB) are read from L3 or DRAM; the indices say which rows come
// next, so the row this many lookups ahead is prefetched while the current one is copied.
constexpr std::int64_t kPrefetchMinTableBytes = 2 * 1024 * 1024;
constexpr std::int64_t kPrefetchDistanceLookups = 8;

struct GatherPlan {
  const std::byte* table;
  std::int64_t row_bytes;
  const std::int32_t* indices;
  std::byte* out;
  bool streaming;  // non-temporal stores (row_bytes and out are whole cache lines)
  bool prefetch;
};

// Copies `bytes` from `from` to `to`: 64-byte vector moves, then one masked move for the tail.
inline void copy_bytes(const std::byte* __restrict from, std::int64_t bytes, std::byte* __restrict to, bool streaming) {
#ifdef TILESIM_ROW_OPS_AVX512
  std::int64_t b = 0;
  if (streaming) {
    for (; b + kCacheLineBytes <= bytes; b += kCacheLineBytes)
      _mm512_stream_si512(reinterpret_cast<__m512i*>(to + b), _mm512_loadu_si512(from + b));
  } else {
    for (; b + kCacheLineBytes <= bytes; b += kCacheLineBytes) _mm512_storeu_si512(to + b, _mm512_loadu_si512(from + b));
  }
  if (b < bytes) {
    const __mmask64 tail = (1ULL << (bytes - b)) - 1;  // bytes - b < 64
    _mm512_mask_storeu_epi8(to + b, tail, _mm512_maskz_loadu_epi8(tail, from + b));
  }
#else
  (void)streaming;
  std::memcpy(to, from, static_cast<std::size_t>(bytes));
#endif
}

// Streaming stores are weakly ordered: a fence makes them visible before the caller (or the join) goes on.
inline void store_fence() {
#ifdef TILESIM_ROW_OPS_AVX512
  _mm_sfence();
#endif
}

inline void prefetch_row(const std::byte* row, std::int64_t row_bytes) {
  for (std::int64_t b = 0; b < row_bytes; b += kCacheLineBytes) __builtin_prefetch(row + b, 0, 3);
}

// One piece of a row (a thread boundary may cut a row): the general path, any byte count.
inline void copy_piece(const GatherPlan& p, std::int64_t lookup, std::int64_t offset, std::int64_t count, std::byte* to) {
  copy_bytes(p.table + std::int64_t{p.indices[lookup]} * p.row_bytes + offset, count, to, p.streaming);
}

#ifdef TILESIM_ROW_OPS_AVX512
// Whole rows of kLines cache lines: the hot loop of a gather, one index load and kLines vector moves
// per row with no length arithmetic or tail test (a 64-byte row is 3 instructions). kLines = 0: the
// line count is only known at run time (lines).
template <int kLines, bool kStreaming, bool kPrefetch>
void copy_whole_rows(const GatherPlan& p, std::int64_t first, std::int64_t end, std::int64_t lines, std::int64_t last_lookup,
                     std::byte* to) {
  const std::int64_t n = kLines > 0 ? kLines : lines;
  for (std::int64_t i = first; i < end; ++i, to += p.row_bytes) {
    if constexpr (kPrefetch) {
      if (i + kPrefetchDistanceLookups <= last_lookup)
        prefetch_row(p.table + std::int64_t{p.indices[i + kPrefetchDistanceLookups]} * p.row_bytes, p.row_bytes);
    }
    const std::byte* from = p.table + std::int64_t{p.indices[i]} * p.row_bytes;
    for (std::int64_t l = 0; l < n; ++l) {
      const __m512i v = _mm512_loadu_si512(from + l * kCacheLineBytes);
      if constexpr (kStreaming)
        _mm512_stream_si512(reinterpret_cast<__m512i*>(to + l * kCacheLineBytes), v);
      else
        _mm512_storeu_si512(to + l * kCacheLineBytes, v);
    }
  }
}

template <bool kStreaming, bool kPrefetch>
void copy_whole_rows_dispatch(const GatherPlan& p, std::int64_t first, std::int64_t end, std::int64_t last_lookup, std::byte* to) {
  const std::int64_t lines = p.row_bytes / kCacheLineBytes;
  switch (lines) {
    case 1: return copy_whole_rows<1, kStreaming, kPrefetch>(p, first, end, lines, last_lookup, to);  // 16 floats
    case 4: return copy_whole_rows<4, kStreaming, kPrefetch>(p, first, end, lines, last_lookup, to);  // 64 floats (PyG)
    default: return copy_whole_rows<0, kStreaming, kPrefetch>(p, first, end, lines, last_lookup, to);
  }
}
#endif

// Output bytes [b_begin, b_end) of a gather, which may start and end inside a row.
void gather_range(const GatherPlan& p, std::int64_t b_begin, std::int64_t b_end) {
  if (b_begin >= b_end) return;
  const std::int64_t last_lookup = (b_end - 1) / p.row_bytes;
  std::int64_t lookup = b_begin / p.row_bytes;
  const std::int64_t head_offset = b_begin - lookup * p.row_bytes;
  if (head_offset != 0) {  // the rest of a row the previous thread began
    const std::int64_t count = std::min(p.row_bytes - head_offset, b_end - b_begin);
    copy_piece(p, lookup, head_offset, count, p.out + b_begin);
    b_begin += count;
    ++lookup;
  }
  const std::int64_t end_full = b_end / p.row_bytes;  // rows [lookup, end_full) are whole in this range
#ifdef TILESIM_ROW_OPS_AVX512
  if (p.row_bytes % kCacheLineBytes == 0 && lookup < end_full) {
    std::byte* to = p.out + lookup * p.row_bytes;
    // Streaming needs 64-byte aligned destinations: rows of whole lines from an aligned output are.
    const bool streaming = p.streaming && reinterpret_cast<std::uintptr_t>(to) % kCacheLineBytes == 0;
    if (streaming)
      p.prefetch ? copy_whole_rows_dispatch<true, true>(p, lookup, end_full, last_lookup, to)
                 : copy_whole_rows_dispatch<true, false>(p, lookup, end_full, last_lookup, to);
    else
      p.prefetch ? copy_whole_rows_dispatch<false, true>(p, lookup, end_full, last_lookup, to)
                 : copy_whole_rows_dispatch<false, false>(p, lookup, end_full, last_lookup, to);
    lookup = end_full;
  }
#endif
  for (; lookup < end_full; ++lookup) {
    if (p.prefetch && lookup + kPrefetchDistanceLookups <= last_lookup)
      prefetch_row(p.table + std::int64_t{p.indices[lookup + kPrefetchDistanceLookups]} * p.row_bytes, p.row_bytes);
    copy_piece(p, lookup, 0, p.row_bytes, p.out + lookup * p.row_bytes);
  }
  const std::int64_t tail_begin = std::max(b_begin, end_full * p.row_bytes);
  if (tail_begin < b_end) copy_piece(p, end_full, tail_begin - end_full * p.row_bytes, b_end - tail_begin, p.out + tail_begin);
}

void gather_bytes(const std::byte* table, std::int64_t num_rows, std::int64_t row_bytes, const std::int32_t* indices,
                  std::int64_t num_lookups, std::byte* out) {
  const std::int64_t out_bytes = num_lookups * row_bytes;
  if (out_bytes == 0) return;
  const std::int64_t bytes_moved = num_lookups * static_cast<std::int64_t>(sizeof(std::int32_t)) + 2 * out_bytes;
  const bool lines = row_bytes % kCacheLineBytes == 0 && reinterpret_cast<std::uintptr_t>(out) % kCacheLineBytes == 0;
  GatherPlan plan{table, row_bytes, indices, out, lines && out_bytes >= kStreamingMinBytes,
                  num_rows * row_bytes >= kPrefetchMinTableBytes};
  // A plain branch rather than the parallel region's if() clause: libgomp still sets up a one-thread team
  // for if(false), ~0.25 us on the development host, five times a whole 32 x 16 gather (~0.05 us).
  const int threads = parallel::threads_for(bytes_moved);
  if (threads == 1) {
    gather_range(plan, 0, out_bytes);
    if (plan.streaming) store_fence();
    return;
  }
  // Threads split the flat output, not the lookups, so a few very wide rows still spread over all cores;
  // boundaries fall on cache lines, so no line is written by two threads.
#pragma omp parallel num_threads(threads)
  {
    const int parts = omp_get_num_threads();
    const int part = omp_get_thread_num();
    auto boundary = [&](int p) {
      if (p == parts) return out_bytes;
      return parallel::part_begin(out_bytes, parts, p) / kCacheLineBytes * kCacheLineBytes;
    };
    gather_range(plan, boundary(part), boundary(part + 1));
    if (plan.streaming) store_fence();
  }
}

template <class T>
void gather_typed(const T* table, std::int64_t num_rows, std::int64_t num_features, const std::int32_t* indices,
                  std::int64_t num_lookups, T* out) {
  gather_bytes(reinterpret_cast<const std::byte*>(table), num_rows, num_features * static_cast<std::int64_t>(sizeof(T)), indices,
               num_lookups, reinterpret_cast<std::byte*>(out));
}

}  // namespace

void gather_f32(const float* table, std::int64_t num_rows, std::int64_t num_features, const std::int32_t* indices,
                std::int64_t num_lookups, float* out) {
  gather_typed(table, num_rows, num_features, indices, num_lookups, out);
}
void gather_f16(const Float16* table, std::int64_t num_rows, std::int64_t num_features, const std::int32_t* indices,
                std::int64_t num_lookups, Float16* out) {
  gather_typed(table, num_rows, num_features, indices, num_lookups, out);
}
void gather_bf16(const BFloat16* table, std::int64_t num_rows, std::int64_t num_features, const std::int32_t* indices,
                 std::int64_t num_lookups, BFloat16* out) {
  gather_typed(table, num_rows, num_features, indices, num_lookups, out);
}

void scatter_add_f32(const float* src, std::int64_t num_messages, std::int64_t num_features, const std::int32_t* indices,
                     std::int64_t num_outputs, float* out) {
  scatter_reduce(Reduce::sum, src, num_messages, num_features, indices, num_outputs, out);
}

}  // namespace tilesim::kernels::cpu
