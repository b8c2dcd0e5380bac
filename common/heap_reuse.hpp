#pragma once
// A process that builds and drops large programs point after point (a sweep, the validation grids)
// keeps its freed heap for the next point instead of handing it back to the kernel.
//
// Why: a large op's program lists hundreds of thousands of exchange transfers (tens of MB). With the C
// library's defaults, blocks that size are mapped afresh and unmapped at every point, and the top of
// the heap is trimmed after each, so every point pays the kernel to fault in and zero its memory again:
// about a fifth of a timing-only hydronet sweep's host time (bench/sim_speed_bench.cpp). Raising the
// thresholds trades that for a resident heap about the size of the largest point's program.
namespace tilesim {

// Idempotent; affects the whole process (and the workers it forks afterwards). A no-op where the C
// library has no such settings.
void keep_freed_heap_for_reuse();

}  // namespace tilesim
