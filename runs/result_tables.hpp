#pragma once
// The tables a run prints, and the per-layer totals its report carries beside the per-op rows.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/result.hpp"

namespace tilesim::runs {

// The short table `tilesim run` prints: one line per op and backend (time, cycles, FLOPs, minimum
// bytes, intensity, verified), and after the last op of each group (a GNN layer, a schnet_block) one
// "= <group>" line per backend with the group's totals. `groups` may be empty. Rows that stand for a
// whole training phase (OpResult::phase) follow the per-op rows, one line each.
std::string format_table(const std::vector<BackendResult>& results, const std::vector<OpGroup>& groups = {});

// Per-group totals of one backend's rows (rows in graph order): name, kind, ops, time_s, cycles (when
// every op has them), flops, min_bytes, intensity_flops_per_byte, verified (all rows checked and
// passed; null when any was not checked). A backend whose rows stand for whole training phases has no
// per-op rows and so no group totals (an empty array).
nlohmann::json group_totals(const std::vector<OpGroup>& groups, const BackendResult& result);

// "1.66 M", "3.58 MB": a count with an SI prefix (powers of 1000) and `unit`, three significant digits.
std::string si_text(double x, const char* unit);

// "1.23 us", "45.6 ms": a time with a unit people read at a glance.
std::string format_time(double seconds);

}  // namespace tilesim::runs
