#pragma once
// One result schema for every backend (simulated, measured, modeled), written to report.json and
// read by the analysis layer. Units sit in the key names.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/op_graph.hpp"

namespace tilesim {

enum class ResultKind { simulated, measured, modeled };
std::string to_string(ResultKind kind);

struct OpResult {
  std::string op;          // op name from the workload
  OpKind op_kind = OpKind::gather;
  OpShape shape;
  DType dtype = DType::float32;
  double time_s = 0;
  std::optional<std::int64_t> cycles;          // simulated backends
  double flops = 0;
  std::int64_t min_bytes = 0;                  // the op's own minimum (ir/op_graph.hpp)
  nlohmann::json bytes_by_level = nlohmann::json::object();  // e.g. {"tile_sram_read_bytes": .., "exchange_bytes": ..}
  std::optional<std::int64_t> exchange_bytes;  // simulated: bytes received over the exchange
  std::optional<std::int64_t> sync_cycles;
  std::optional<std::int64_t> compute_cycles;
  std::optional<std::int64_t> exchange_cycles;
  std::optional<std::int64_t> peak_tile_bytes;
  std::optional<bool> verified;                // nullopt: outputs not computed (timing-only)
  std::string verification;                    // what was checked, or why not
  nlohmann::json timing = nlohmann::json::object();  // measured: median/min/max/quartiles/repeats
  nlohmann::json plan = nlohmann::json::object();    // simulated: the mapping the planner chose
  // Set on a row that stands for a whole phase of a training step rather than one op of the graph: a
  // backend that runs the phase as one unit (torch-cpu's autograd step records its forward ops and runs
  // the backward inside loss.backward(), so no per-op time exists). op_kind and shape are then unused;
  // flops and min_bytes are the phase's ops' totals. Reports write "op_kind": "phase" and "phase".
  std::optional<OpPhase> phase;

  nlohmann::json to_json() const;
  // A row for `op` with what the op itself says filled in: name, kind, shape, dtype, FLOPs, min_bytes.
  static OpResult for_op(const Op& op);
};

struct BackendResult {
  std::string backend;     // as the user named it, resolved: "ipu:bow", "cpu"
  ResultKind kind = ResultKind::measured;
  std::string machine;     // machine name or file
  double time_s = 0;       // sum over ops
  std::optional<std::int64_t> cycles;
  std::vector<OpResult> ops;
  nlohmann::json host = nlohmann::json::object();  // simulator speed, threads used, ...

  nlohmann::json to_json() const;
};

}  // namespace tilesim
