#pragma once
// The SRAM a whole graph needs, op by op: what one op's plan needs (its peak tile bytes) is not all
// that is on the tiles while it runs. Every tensor written earlier and read at or after it stays there,
// and so do the graph inputs still to be read; in a training step that is the activations the backward
// reads, the parameters, the gradients and the optimizer state, for the whole step. Each live tensor
// is spread over the tiles as the linear layout spreads it (planning/linear_layout.hpp), rotated as
// PopART rotates it: each tensor's mapping starts on the tile after the previous tensor's last, in the
// order the graph creates them, so small tensors spread round the chip; the busiest tile of the live
// tensors is what counts. Tensors nobody reads (the step's results) stay until the step ends.
//
// Recomputation (OpGraph::recompute_activations, PopTorch's recompute): a forward activation that a
// backward op reads is dropped after the forward pass and recomputed by re-running its producing op
// just before its first backward reader. The producer's operands must be there then: graph inputs
// are; a recomputed activation is recomputed earlier; any other forward output is kept until then (a
// checkpoint). Simplification: a re-run costs its op's cycles again (same program, same operands) and
// its own working buffers are not added to the backward op's.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/op_graph.hpp"
#include "models/ipu/machine/machine_file.hpp"

namespace tilesim::ipu {

struct OpMemory {
  std::int64_t live_tile_bytes = 0;  // tensors live across the op (not its own operands or output), their busiest tile
  std::int64_t live_busiest_tile = 0;  // which tile that is
  std::int64_t op_tile_bytes = 0;    // the op's own plan: its busiest tile
  std::int64_t total() const { return live_tile_bytes + op_tile_bytes; }
};

// Op positions [first, last] a tensor is on the tiles.
struct LiveInterval {
  std::size_t first = 0, last = 0;
  bool contains(std::size_t k) const { return first <= k && k <= last; }
};

struct StepMemory {
  std::vector<OpMemory> ops;                   // by op position
  std::vector<std::vector<LiveInterval>> live;  // by tensor: when it is on the tiles (two spans when recomputed)
  // Recomputation: the forward ops re-run (by position) and, for each, the op it re-runs before.
  std::vector<std::size_t> recomputed;
  std::vector<std::size_t> recomputed_before;
  std::size_t peak_op = 0;
  std::int64_t peak_tile_bytes() const { return ops.empty() ? 0 : ops[peak_op].total(); }
};

// Live tensors and recomputation for `graph`, given each op's own peak tile bytes (by position).
StepMemory step_memory(const OpGraph& graph, const std::vector<std::int64_t>& op_tile_bytes, const IpuMachine& machine);

// Throws the exit-3 tilesim::PlanError when some op's live tensors and own bytes exceed a tile's SRAM:
// it names the op, the bytes (the activations kept for the backward among them, and the largest live
// tensors) and what to try (recompute for a training step that keeps activations, a smaller batch, more
// IPUs).
void check_step_memory(const OpGraph& graph, const StepMemory& memory, const IpuMachine& machine);

}  // namespace tilesim::ipu
