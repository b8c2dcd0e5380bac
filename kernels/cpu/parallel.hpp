#pragma once
// How the CPU kernels split work over OpenMP threads, and when they do not: shared by every kernel file.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace tilesim::kernels::cpu::parallel {

// A call that moves fewer bytes than this runs on the calling thread. Forking and joining the OpenMP
// team costs ~1.1 us on the 2-core development host, while one core moves cache-resident rows at
// ~80 GB/s: below ~256 KiB the second thread cannot win back its start-up.
constexpr std::int64_t kParallelMinBytes = 256 * 1024;

// Thread boundaries inside a flat float array fall on multiples of 16 floats (64 bytes), so with a
// cache-aligned array no line is written by two threads.
constexpr std::int64_t kFloatsPerCacheLine = 16;

// Threads a call of `bytes_moved` bytes should use: 1 below kParallelMinBytes, else the OpenMP maximum.
// Asked without entering a parallel region, so the serial path makes no OpenMP call beyond this query.
inline int threads_for(std::int64_t bytes_moved) {
  if (bytes_moved < kParallelMinBytes) return 1;
  return omp_get_max_threads();
}

// Start of part `part` of `parts` near-equal parts of [0, n).
inline std::int64_t part_begin(std::int64_t n, int parts, int part) {
  return n / parts * part + std::min<std::int64_t>(n % parts, part);
}

// As part_begin, rounded down to a cache line of floats (the last part still ends at n).
inline std::int64_t part_begin_aligned(std::int64_t n, int parts, int part) {
  if (part == parts) return n;
  return part_begin(n, parts, part) / kFloatsPerCacheLine * kFloatsPerCacheLine;
}

// Scratch memory kept by a thread between calls, so repeated (timed) calls do not pay page faults for
// fresh buffers. Grows only; one buffer per slot, so a kernel can hold several at once.
class Scratch {
 public:
  enum Slot { partials = 0, counts = 1, rows = 2, other = 3, kSlots = 4 };
  template <class T>
  T* get(Slot slot, std::size_t count) {
    const std::size_t bytes = count * sizeof(T);
    Buffer& b = buffers_[slot];
    if (bytes > b.capacity_bytes) {
      b.data.reset();  // free first, so the old and new buffers are never held together
      // Cache-line aligned, so thread boundaries from part_begin_aligned never share a line.
      b.data.reset(static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{64})));
      b.capacity_bytes = bytes;
    }
    return reinterpret_cast<T*>(b.data.get());
  }

 private:
  struct AlignedDelete {
    void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t{64}); }
  };
  struct Buffer {
    std::unique_ptr<std::byte[], AlignedDelete> data;
    std::size_t capacity_bytes = 0;
  };
  Buffer buffers_[kSlots];
};

// This thread's scratch (each OpenMP worker has its own).
Scratch& scratch();

// Runs body(begin, end) over [0, count) of a flat float array: on the calling thread below
// kParallelMinBytes moved, else split over the OpenMP team on cache-line boundaries.
template <class Body>
void for_each_block(std::int64_t count, std::int64_t bytes_moved, const Body& body) {
  const int threads = threads_for(bytes_moved);
  if (threads == 1) {
    body(std::int64_t{0}, count);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int parts = omp_get_num_threads(), part = omp_get_thread_num();
    body(part_begin_aligned(count, parts, part), part_begin_aligned(count, parts, part + 1));
  }
}

}  // namespace tilesim::kernels::cpu::parallel
