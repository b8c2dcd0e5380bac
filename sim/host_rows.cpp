#include "sim/host_rows.hpp"

#include <algorithm>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sim/block_copy.hpp"

namespace tilesim::sim {

namespace {

// Below this many bytes, waking a second thread costs more than it saves.
constexpr std::int64_t parallel_min_bytes = std::int64_t{1} << 20;
// Bytes per unit of work handed to a thread: large enough to amortise the hand-out, small enough that
// threads finish together.
constexpr std::int64_t unit_bytes = std::int64_t{256} << 10;

// Host reads larger than this are written with non-temporal (streaming) stores, as the CPU gather
// kernel writes its output: they would not stay in cache anyway, and a streaming store skips the
// read-for-ownership of each host line, so memory carries the bytes once instead of twice.
constexpr std::int64_t streaming_min_bytes = std::int64_t{16} << 20;
constexpr std::int64_t cache_line_bytes = 64;
constexpr std::int64_t vector_bytes = 16;
// A band of column blocks reads one row of each block in turn, dozens of streams at once, more than the
// hardware prefetcher follows; each block's bytes this far ahead are prefetched.
constexpr std::int64_t prefetch_ahead_bytes = 512;

// Consecutive pieces [first, last) over the same host rows.
struct Band {
  std::size_t first = 0, last = 0;
  std::int64_t rows = 0;
  std::int64_t row_bytes = 0;  // of all its pieces together
  bool vector_aligned = true;  // every piece's host rows start on vector_bytes and are whole vectors long
};

// Rows [row_begin, row_end) of one band.
struct Unit {
  std::size_t band = 0;
  std::int64_t row_begin = 0, row_end = 0;
};

// A piece whose rows are contiguous on the host too is one row: one move instead of `rows`.
HostRowsView as_one_run_if_contiguous(HostRowsView p) {
  if (p.rows > 1 && p.host_stride_bytes == p.row_bytes) {
    p.row_bytes *= p.rows;
    p.rows = 1;
  }
  return p;
}

bool same_band(const HostRowsView& first, const HostRowsView& p) {
  return p.rows == first.rows && p.host_stride_bytes == first.host_stride_bytes && p.host >= first.host &&
         p.host - first.host < std::max<std::int64_t>(first.host_stride_bytes, 1);
}

// Copies n bytes to `dst` with streaming stores for its whole cache lines, ordinary stores for the
// partial lines at either end (a streaming store to part of a line would flush it half-written).
void stream_bytes(std::byte* dst, const std::byte* src, std::int64_t n) {
#if defined(__SSE2__)
  const auto address = reinterpret_cast<std::uintptr_t>(dst);
  const auto head = static_cast<std::int64_t>((cache_line_bytes - address % cache_line_bytes) % cache_line_bytes);
  if (n < head + cache_line_bytes) {
    move_bytes(dst, src, static_cast<std::size_t>(n));
    return;
  }
  move_bytes(dst, src, static_cast<std::size_t>(head));
  std::int64_t b = head;
  for (; b + cache_line_bytes <= n; b += cache_line_bytes) {
    for (std::int64_t w = 0; w < cache_line_bytes; w += vector_bytes) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + b + w), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + b + w)));
    }
  }
  move_bytes(dst + b, src + b, static_cast<std::size_t>(n - b));
#else
  move_bytes(dst, src, static_cast<std::size_t>(n));
#endif
}

// Streaming stores are weakly ordered: a fence makes them visible before the thread's work counts as done.
void store_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

// Rows [row_begin, row_end) of a band read to the host with streaming stores, when its shape allows:
// a one-piece band's rows straight from the buffer; a band of column blocks whose host rows are whole
// aligned vectors, vector by vector (consecutive blocks fill each host line in turn, so the lines
// still leave whole). Returns false for any other band.
bool stream_unit_to_host(const std::vector<HostRowsView>& pieces, const Band& band, std::int64_t row_begin,
                         std::int64_t row_end) {
  if (band.last - band.first == 1) {
    const HostRowsView& p = pieces[band.first];
    for (std::int64_t r = row_begin; r < row_end; ++r) {
      stream_bytes(p.host + r * p.host_stride_bytes, p.buffer + r * p.row_bytes, p.row_bytes);
    }
    store_fence();
    return true;
  }
#if defined(__SSE2__)
  if (!band.vector_aligned) return false;
  for (std::int64_t r = row_begin; r < row_end; ++r) {
    for (std::size_t k = band.first; k < band.last; ++k) {
      const HostRowsView& p = pieces[k];
      const std::byte* src = p.buffer + r * p.row_bytes;
      std::byte* dst = p.host + r * p.host_stride_bytes;
      __builtin_prefetch(src + prefetch_ahead_bytes);
      for (std::int64_t b = 0; b < p.row_bytes; b += vector_bytes) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst + b), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + b)));
      }
    }
  }
  store_fence();
  return true;
#else
  return false;
#endif
}

void move_unit(const std::vector<HostRowsView>& pieces, const Band& band, std::int64_t row_begin, std::int64_t row_end,
               HostMove direction, bool streaming) {
  if (streaming && direction == HostMove::to_host && stream_unit_to_host(pieces, band, row_begin, row_end)) return;
  for (std::int64_t r = row_begin; r < row_end; ++r) {
    for (std::size_t k = band.first; k < band.last; ++k) {
      const HostRowsView& p = pieces[k];
      std::byte* buffer_row = p.buffer + r * p.row_bytes;
      std::byte* host_row = p.host + r * p.host_stride_bytes;
      const auto n = static_cast<std::size_t>(p.row_bytes);
      if (direction == HostMove::to_host) {
        __builtin_prefetch(buffer_row + prefetch_ahead_bytes);
        move_bytes(host_row, buffer_row, n);
      } else {
        move_bytes(buffer_row, host_row, n);
      }
    }
  }
}

}  // namespace

void move_host_rows(const std::vector<HostRowsView>& given, HostMove direction, HostThreads& threads) {
  std::vector<HostRowsView> pieces;
  pieces.reserve(given.size());
  for (const auto& p : given) {
    if (p.rows > 0 && p.row_bytes > 0) pieces.push_back(as_one_run_if_contiguous(p));
  }
  std::vector<Band> bands;
  std::int64_t total_bytes = 0;
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    if (bands.empty() || !same_band(pieces[bands.back().first], pieces[k])) {
      bands.push_back({k, k, pieces[k].rows, 0, true});
    }
    Band& band = bands.back();
    const HostRowsView& p = pieces[k];
    band.vector_aligned &= reinterpret_cast<std::uintptr_t>(p.host) % vector_bytes == 0 &&
                           p.host_stride_bytes % vector_bytes == 0 && p.row_bytes % vector_bytes == 0;
    band.last = k + 1;
    band.row_bytes += pieces[k].row_bytes;
    total_bytes += pieces[k].rows * pieces[k].row_bytes;
  }
  const bool streaming = total_bytes >= streaming_min_bytes;
  if (total_bytes < parallel_min_bytes || threads.threads() <= 1) {
    for (const Band& band : bands) move_unit(pieces, band, 0, band.rows, direction, streaming);
    return;
  }
  std::vector<Unit> units;
  for (std::size_t b = 0; b < bands.size(); ++b) {
    const std::int64_t rows_per_unit = std::max<std::int64_t>(1, unit_bytes / bands[b].row_bytes);
    for (std::int64_t r = 0; r < bands[b].rows; r += rows_per_unit) {
      units.push_back({b, r, std::min(bands[b].rows, r + rows_per_unit)});
    }
  }
  threads.run(static_cast<std::int64_t>(units.size()), [&](std::int64_t u) {
    const Unit& unit = units[static_cast<std::size_t>(u)];
    move_unit(pieces, bands[unit.band], unit.row_begin, unit.row_end, direction, streaming);
  });
}

}  // namespace tilesim::sim
