#include "common/heap_reuse.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tilesim {

void keep_freed_heap_for_reuse() {
#if defined(__GLIBC__)
  // glibc caps the mapping threshold at 32 MiB on 64-bit hosts, and a large scatter's transfer list
  // is larger than that: no block is mapped on its own (M_MMAP_MAX 0), so every block, however large,
  // comes from the heap and is reused there (the hydronet grid on ipu:bow took about 5.5 s of wall time
  // with 1 s in the kernel when its largest lists were mapped afresh at every point, 4 s without). The
  // threshold stays raised for a library that resets the count.
  constexpr int mmap_threshold_bytes = 32 * 1024 * 1024;
  // Never trim the heap's top back to the kernel between points; pad each growth so that a larger
  // point's program does not grow it page by page.
  constexpr int trim_threshold_bytes = 1024 * 1024 * 1024;
  constexpr int top_pad_bytes = 64 * 1024 * 1024;
  mallopt(M_MMAP_THRESHOLD, mmap_threshold_bytes);
  mallopt(M_TRIM_THRESHOLD, trim_threshold_bytes);
  mallopt(M_TOP_PAD, top_pad_bytes);
  mallopt(M_MMAP_MAX, 0);
#endif
}

}  // namespace tilesim
