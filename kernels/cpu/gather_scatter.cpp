// Gather on the host CPU: a copy of rows, done as 64-byte AVX-512 moves, split over OpenMP threads for
// large calls, with non-temporal stores for outputs past the cache (also when the output does not start
// on a cache line); scatter-add is the sum case of scatter_reduce.cpp's engine.
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
  // Non-temporal stores into an output that does not start on a cache line (a std::vector's large
  // buffer starts 16 bytes into a page, as every output the backends time does): rows of whole lines,
  // realigned in registers (stream_shifted_lines). The output's first `head` bytes lie before its first
  // whole line.
  bool shifted = false;
  std::int64_t head = 0;
  std::int64_t num_lookups = 0;
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
void gather_range(const GatherPlan& p, std::int64_t b_begin, std::int64_t b_end);

#ifdef TILESIM_ROW_OPS_AVX512
// The whole output lines [o_begin, o_end) of a shifted plan (both offsets are p.head past a line
// boundary of the output, so the stores are aligned). The output is the concatenation of the gathered
// rows' source lines; the line at output offset o = p.head + 64 j is the last 64 - head bytes of source
// line j and the first `head` bytes of line j + 1, which one two-source permute (vpermt2d) puts
// together from the two loads. Each source line is loaded once.
void stream_shifted_lines(const GatherPlan& p, std::int64_t o_begin, std::int64_t o_end) {
  if (o_begin >= o_end) return;
  const std::int64_t lines_per_row = p.row_bytes / kCacheLineBytes;
  const std::int64_t first_line = (o_begin - p.head) / kCacheLineBytes, end_line = (o_end - p.head) / kCacheLineBytes;
  // Dword i of the result is dword i + head / 4 of (line j, line j + 1): indices past 15 pick line j + 1.
  const __m512i pick = _mm512_add_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                        _mm512_set1_epi32(static_cast<int>(p.head / 4)));
  std::int64_t lookup = first_line / lines_per_row, line = first_line % lines_per_row;
  const std::byte* row = p.table + std::int64_t{p.indices[lookup]} * p.row_bytes;
  __m512i previous = _mm512_loadu_si512(row + line * kCacheLineBytes);
  std::byte* to = p.out + o_begin;
  for (std::int64_t j = first_line; j < end_line; ++j, to += kCacheLineBytes) {
    if (++line == lines_per_row) {  // line j + 1 begins the next row
      line = 0;
      ++lookup;
      row = p.table + std::int64_t{p.indices[lookup]} * p.row_bytes;
      if (p.prefetch && lookup + kPrefetchDistanceLookups < p.num_lookups)
        prefetch_row(p.table + std::int64_t{p.indices[lookup + kPrefetchDistanceLookups]} * p.row_bytes, p.row_bytes);
    }
    const __m512i next = _mm512_loadu_si512(row + line * kCacheLineBytes);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(to), _mm512_permutex2var_epi32(previous, pick, next));
    previous = next;
  }
}
#endif

// Output bytes [b_begin, b_end) of a shifted plan: the part before the first whole output line and
// after the last with ordinary stores (gather_range), the whole lines between streamed.
void gather_range_shifted(const GatherPlan& p, std::int64_t b_begin, std::int64_t b_end) {
  GatherPlan ordinary = p;
  ordinary.streaming = ordinary.shifted = false;
#ifdef TILESIM_ROW_OPS_AVX512
  // Thread boundaries past the first lie on whole output lines (gather_bytes), so only b_begin = 0 is before one.
  const std::int64_t body_begin = std::max(b_begin, p.head);
  if (body_begin < b_end) {
    const std::int64_t body_end = body_begin + (b_end - body_begin) / kCacheLineBytes * kCacheLineBytes;
    gather_range(ordinary, b_begin, body_begin);
    stream_shifted_lines(p, body_begin, body_end);
    gather_range(ordinary, body_end, b_end);
    return;
  }
#endif
  gather_range(ordinary, b_begin, b_end);
}

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
  const auto out_address = reinterpret_cast<std::uintptr_t>(out);
  const bool whole_rows = row_bytes % kCacheLineBytes == 0, large = out_bytes >= kStreamingMinBytes;
  GatherPlan plan{table, row_bytes, indices, out, whole_rows && large && out_address % kCacheLineBytes == 0,
                  num_rows * row_bytes >= kPrefetchMinTableBytes};
  plan.num_lookups = num_lookups;
  // Bytes before the output's first cache line boundary: thread boundaries fall on the output's own
  // lines, so no line is written by two threads (and streamed lines are aligned).
  plan.head = static_cast<std::int64_t>((kCacheLineBytes - out_address % kCacheLineBytes) % kCacheLineBytes);
#ifdef TILESIM_ROW_OPS_AVX512
  // The realigning path moves dwords: the output must start on 4 bytes (any float32 array does).
  plan.shifted = whole_rows && large && plan.head != 0 && out_address % 4 == 0;
#endif
  const bool streams = plan.streaming || plan.shifted;
  auto range = [&plan](std::int64_t b_begin, std::int64_t b_end) {
    plan.shifted ? gather_range_shifted(plan, b_begin, b_end) : gather_range(plan, b_begin, b_end);
  };
  // A plain branch rather than the parallel region's if() clause: libgomp still sets up a one-thread team
  // for if(false), ~0.25 us on the development host, five times a whole 32 x 16 gather (~0.05 us).
  const int threads = parallel::threads_for(bytes_moved);
  if (threads == 1) {
    range(0, out_bytes);
    if (streams) store_fence();
    return;
  }
  // Threads split the flat output, not the lookups, so a few very wide rows still spread over all cores;
  // boundaries fall on the output's cache lines (plan.head past its start), so no line is written by two
  // threads.
#pragma omp parallel num_threads(threads)
  {
    const int parts = omp_get_num_threads();
    const int part = omp_get_thread_num();
    auto boundary = [&](int p) -> std::int64_t {
      if (p == 0) return 0;
      if (p == parts) return out_bytes;
      const std::int64_t head = std::min(plan.head, out_bytes);
      const std::int64_t lines = parallel::part_begin(out_bytes - head, parts, p) / kCacheLineBytes * kCacheLineBytes;
      return std::min(head + lines, out_bytes);
    };
    range(boundary(part), boundary(part + 1));
    if (streams) store_fence();
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
