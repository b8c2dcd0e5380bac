#pragma once
// Cycle costs of the IPU codelets tilesim's planners use, as pure functions of the work a worker does
// and the machine file's constants (poplibs' own estimator structure). Results are worker cycles; the
// engine turns a vertex's per-worker cycles into tile cycles by barrel scheduling
// (sim::barrel_tile_cycles), and the planner estimates a vertex the same way (planning/phase_estimate.hpp).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "ir/op_graph.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "sim/inline_list.hpp"
#include "sim/machine_config.hpp"

namespace tilesim::ipu {

// Per-worker cycles of a vertex whose `workers` take contiguous, equal shares of `items` (the last
// share may be short and later ones empty): worker(n) for a share of n > 0 items, 0 for an idle worker.
// In a vertex's own inline list (sim::Vertex::worker_cycles): no heap block per vertex.
template <class WorkerCycles>
sim::InlineList<sim::Cycles, 6> worker_split_cycles(std::int64_t items, std::int64_t workers, WorkerCycles worker) {
  sim::InlineList<sim::Cycles, 6> cycles(static_cast<std::size_t>(workers), 0);
  const std::int64_t share = (items + workers - 1) / workers;
  for (std::int64_t w = 0; w < workers; ++w) {
    const std::int64_t n = std::min(items, (w + 1) * share) - std::min(items, w * share);
    if (n > 0) cycles[static_cast<std::size_t>(w)] = worker(n);
  }
  return cycles;
}

// The cost functions take element counts of the value type the cost set `c` is for (CodeletCosts).

// MultiSlice (gather) on one worker: `in_range` lookups whose row is on this tile are copied
// (`row_elements` each); `out_of_range` lookups are checked and skipped.
sim::Cycles multislice_worker_cycles(std::int64_t in_range, std::int64_t out_of_range, std::int64_t row_elements,
                                     const CodeletCosts& c);

// MultiUpdateAdd (scatter-add) on one worker: the worker scans every offset; `in_range` of them fall in
// the rows it owns and add a row of `row_elements` values in 4-byte atoms (a 16-bit row of odd length
// on the sub-word path), the other `out_of_range` are skipped.
sim::Cycles multiupdateadd_worker_cycles(std::int64_t in_range, std::int64_t out_of_range, std::int64_t row_elements,
                                         const CodeletCosts& c);

// Fill (zeroing) of `bytes` by one worker.
sim::Cycles fill_worker_cycles(std::int64_t bytes, const CodeletCosts& c);

// An elementwise integer op (the row block of each index) over `elements` int32 by one worker.
sim::Cycles index_transform_worker_cycles(std::int64_t elements, const CodeletCosts& c);

// Reduce (sum) on one worker: `output_elements` outputs, each the sum of `partials` partials.
sim::Cycles reduce_worker_cycles(std::int64_t output_elements, std::int64_t partials, const CodeletCosts& c);

// popops UnaryOp1D on one worker: `elements` results of `fn`. Transcendental functions
// (exp, shifted softplus, cosine cutoff, rsqrt, reciprocal) pay the larger prologue.
sim::Cycles unary_worker_cycles(UnaryFn fn, std::int64_t elements, const CodeletCosts& c);
bool unary_is_transcendental(UnaryFn fn);
// The per-vector part of unary_worker_cycles: one vector of elementwise_elements_per_vector results of `fn`.
sim::Cycles unary_worker_cycles_per_vector(UnaryFn fn, const CodeletCosts& c);

// popops BinaryOp1D on one worker: `elements` results of `fn` (a broadcast operand costs the
// same per element: BroadcastVectorInner/Scalar vertices run the same loop).
sim::Cycles binary_worker_cycles(BinaryFn fn, std::int64_t elements, const CodeletCosts& c);

// popops Cast1D on one worker: `elements` values converted from `from` to `to` (float32 <-> float16), then,
// when `scale` is not 1, multiplied by it at `to` (a scale pass, as loss scaling multiplies apart from
// the cast). A cast to the same type is the scale pass alone (or a copy, costed as one).
sim::Cycles cast_worker_cycles(DType from, DType to, bool scale, std::int64_t elements, const CodeletCosts& c);

// Replacing a scatter's identity in rows that received nothing (max: -inf -> 0), a compare and select
// per element, by one worker: costed as a RELU pass (the same compare-select loop).
sim::Cycles select_worker_cycles(std::int64_t elements, const CodeletCosts& c);

// One AMP (ConvPartial1x1-style) matmul vertex on a tile: [m x k] @ [k x n], in TILE cycles (the AMP
// vertex occupies the whole tile): the measured fixed cost plus 2 m k n / the operand type's peak rate.
sim::Cycles amp_matmul_tile_cycles(std::int64_t m, std::int64_t k, std::int64_t n, const CodeletCosts& c);

}  // namespace tilesim::ipu
