#pragma once
// The simulated IPU as a backend: each op is planned, built into a BSP program and run on the engine.
// Results are labelled "simulated"; time_s is device time (cycles / tile clock), the quantity the
// hydronet Bow measurements report.
//
// Chained graphs: ops run in list order, each as its own program on the one process-wide engine; an
// op's operands are graph inputs (from the caller) or earlier ops' outputs (kept from this run). The
// layout contract between ops (programs/op_program.hpp): every op's output ends in the linear layout and the
// next op starts from there, paying its own exchanges into its plan's layout, so a graph's cycles are
// the sum of its ops' cycles. Per-op rows carry cycles, compute/sync/exchange cycles, exchange bytes
// and the SRAM peak; the trace (RunOptions::trace_path) holds every superstep of every op on one
// timeline. An op no plan fits, or whose program overflows a tile, is a tilesim::PlanError (exit 3)
// naming the tile, the bytes needed and there, and the next step; so is an op whose plan fits but not
// beside the tensors live across it (planning/step_memory.hpp: a training step's activations,
// parameters, gradients and optimizer state), checked before any op runs. A training step runs as its
// graph, once per step (models/ipu/README.md, "Training steps"); with OpGraph::recompute_activations the
// forward ops the backward re-runs add their cycles to the backward op they precede.
#include <optional>
#include <string>
#include <vector>

#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/planning/plan.hpp"
#include "models/ipu/planning/step_memory.hpp"
#include "results/backend.hpp"
#include "sim/engine.hpp"

namespace tilesim::ipu {

// How gathers and scatters over a model's graph are compiled (programs/static_index_program.hpp): dynamic (poplibs'
// MultiSlice / MultiUpdate, what PopTorch runs; the default) or static (the edges compiled into the
// exchange). Ops whose indices are not known at compile time are dynamic in both modes.
enum class IndexMode { dynamic, static_ };

class IpuBackend : public Backend {
 public:
  IpuBackend(IpuMachine machine, std::string name, IndexMode index_mode = IndexMode::dynamic);
  std::string name() const override { return name_; }
  // Plans every op and checks the step's memory (planning/step_memory.hpp): tilesim::PlanError (exit 3)
  // when an op, or an op with the tensors live across it, does not fit.
  void prepare(const OpGraph& graph) override;
  void warm_up() override;
  // The SRAM each op of `graph` needs with the tensors live across it, and what recomputation re-runs.
  StepMemory plan_memory(const OpGraph& graph) const;
  BackendResult run(const OpGraph& graph, const TensorValues& inputs, const RunOptions& options) override;
  // Outputs of the last functional run, by output tensor (empty in timing-only mode).
  const TensorValues& outputs() const { return outputs_; }
  const TensorValues* computed_outputs() const override { return &outputs_; }
  const IpuMachine& machine() const { return machine_; }
  nlohmann::json machine_provenance() const override { return machine_.provenance.to_json(); }

 private:
  bool compiled_indices(const OpGraph& graph, const Op& op) const;
  // Each op's plan (with its index tensor from `inputs` when given) and own peak tile bytes.
  std::vector<OpPlan> plan_graph(const OpGraph& graph, const TensorValues* inputs, std::vector<std::int64_t>& op_tile_bytes) const;
  // True when planning an op of `graph` reads its index tensor (a segment_matmul follows its offsets),
  // so that plans made for other values may not be reused.
  bool plans_read_indices(const OpGraph& graph) const;

  IpuMachine machine_;
  std::string name_;
  IndexMode index_mode_ = IndexMode::dynamic;
  TensorValues outputs_;
  // The last run's plans and each op's own peak tile bytes, for RunOptions::same_graph_as_last_run
  // (the machine and index mode are fixed at construction); empty when that run's planning failed.
  struct GraphPlans {
    std::vector<OpPlan> plans;
    std::vector<std::int64_t> op_tile_bytes;
  };
  std::optional<GraphPlans> last_plans_;
};

// One op on the machine in timing-only mode: the plan, the run's stats and the device time. What
// validation and sweeps call for each point (no bytes moved, same cycles as a functional run).
// `indices` is the op's index tensor (segment_matmul: its offsets; empty for ops without one). The op's
// value operands are taken to be graph inputs (see the layout contract above).
struct OpTiming {
  OpPlan plan;
  sim::RunStats stats;
  double time_s = 0;
};
OpTiming simulate_op_timing(const Op& op, const std::vector<std::int32_t>& indices, const IpuMachine& machine);
// (An op whose value dtype the machine does not model is refused by require_modelled_op_dtype,
// planning/plan.hpp: bfloat16 always, float16 on a machine file without half codelet costs.)

// The process-wide engine. SystemC elaborates once per process, so its first use fixes its tile slots: the
// most of `machine`'s tiles, those of every machine reserved before (reserve_engine_tiles), and those of the
// largest shipped machine of one board (at most 8 IPUs, so a process may run any of those in any order).
// A Pod's tens of thousands of tile modules cost every process that elaborates them (about 0.3 s and
// 200 MB for a Pod64, three times that under the sanitizers), so they are elaborated only where asked for.
// Throws std::logic_error naming the remedy when a machine larger than the elaborated engine comes later.
sim::Engine& engine_for(const IpuMachine& machine);
// Records that this process will run `tiles` tiles (an IPU backend or a system's collectives does so when
// it is made, before anything runs).
void reserve_engine_tiles(std::int32_t tiles);

}  // namespace tilesim::ipu
