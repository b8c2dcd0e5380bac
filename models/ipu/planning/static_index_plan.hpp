#pragma once
// The plan of an op in static index mode (programs/static_index_program.hpp): its indices are compiled
// into the exchange, both operands and the output stay in the linear layout, and its cycles come from
// the engine run alone, so the plan records only what reports show and what memory any index set needs.
#include <cstdint>

#include "ir/op_graph.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/planning/plan.hpp"

namespace tilesim::ipu {

// The kinds with a static-index program: gather, scatter_add, scatter_mean, scatter_max.
inline bool static_index_kind(OpKind kind) {
  return kind == OpKind::gather || kind == OpKind::scatter_add || kind == OpKind::scatter_mean || kind == OpKind::scatter_max;
}

// The op's plan as reports show it (static_indices set; its cycles come from the engine run). Its
// peak-tile estimate is static_index_min_tile_bytes: what any index set needs.
OpPlan static_index_plan(const Op& op, const IpuMachine& machine);
// The busiest tile's share of the input and the output in the linear layout: a lower bound on the
// SRAM a static-index program needs on some tile, whatever the indices.
std::int64_t static_index_min_tile_bytes(const Op& op, const IpuMachine& machine);

}  // namespace tilesim::ipu
