#pragma once
// The interface every backend implements: run the ops of an op graph on given inputs.
#include <cstdint>
#include <string>

#include "common/defaults.hpp"
#include "ir/op_graph.hpp"
#include "ir/reference/reference.hpp"
#include "ir/tensor_values.hpp"
#include "results/result.hpp"

namespace tilesim {

struct RunOptions {
  bool timing_only = false;     // simulated backends: skip moving real bytes (same cycles)
  std::string trace_path;       // simulated backends: write a Chrome/Perfetto trace here when set
  // Simulated backends: each row's plan and per-phase statistics (OpResult::plan). A sweep, whose rows
  // carry neither, turns it off: building them was a tenth of a timing-only point's heap blocks.
  bool plan_details = true;
  // The caller's word that this run's graph is its last run's on this backend, ops and shapes alike,
  // with other input values: a sweep's next repeat of a point. A simulated backend may then reuse the
  // plans it made for that run (an op's plan follows its shapes and the machine, not its values).
  bool same_graph_as_last_run = false;
  int warmup = defaults::warmup_calls;  // measured backends: untimed calls before timing
  int repeats = defaults::timed_calls;  // measured backends: timed calls (median reported)
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Checks, before any input is generated, that every op of the graph can run on this backend (a
  // simulated machine plans each op here); throws tilesim::PlanError when one cannot.
  virtual void prepare(const OpGraph& graph) { (void)graph; }
  // Builds what every run of this backend needs once per process (a simulated machine's engine), so
  // that a sweep's worker processes, forked after it, share it instead of each building its own.
  virtual void warm_up() {}
  // Runs every op of the graph in order on the given input values and returns one row per op.
  virtual BackendResult run(const OpGraph& graph, const TensorValues& inputs, const RunOptions& options) = 0;
  // The outputs of the last run, by output tensor, for cross-backend checks; nullptr for backends that
  // compute none (models), and empty after a timing-only run.
  virtual const TensorValues* computed_outputs() const { return nullptr; }
  // How this backend adds up a half matmul's dot products, which its outputs are verified and compared
  // under (reference::Accumulation): float32 accumulators unless the backend knows otherwise.
  virtual reference::Accumulation accumulation() const { return {}; }
  // The resolved machine file this backend models, for reports: every figure with its value, source and
  // file, the files read and a content hash (MachineProvenance::to_json()); null without a machine file.
  virtual nlohmann::json machine_provenance() const { return nullptr; }
};

}  // namespace tilesim
