#pragma once
// A backend family (ipu, cpu, torch-cpu, cuda, gpu-model) describes itself to the rest of tilesim: the
// names it accepts, its kind, modes and machine, whether this build has it, how to make it, how its
// rows are described, its roofline ceilings and its machine listing. One small file per family
// implements it (ipu_family.cpp, ...); registry.hpp lists them and answers for all of them, so the
// command, the sweeps and the analysis ask the family instead of branching on its name.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/backend_spec.hpp"
#include "backends/ceilings.hpp"
#include "ir/op_graph.hpp"
#include "results/backend.hpp"
#include "results/epoch_execution.hpp"
#include "results/result.hpp"

namespace tilesim::backends {

class SystemView;  // backends/system_view.hpp

// What `tilesim fit` learns of one step's graph on a backend that plans its memory (the simulated
// IPU): the peak bytes of its busiest tile and the op at that peak. Throws PlanError when the step
// does not fit.
struct StepMemoryFit {
  std::int64_t peak_tile_bytes = 0;
  std::size_t peak_op = 0;
};
using StepMemoryFitter = std::function<StepMemoryFit(const OpGraph& graph)>;

// What `tilesim validate` asks of a backend for a measured grid of single ops: the time of one op (a
// gather or a scatter of `shape`, float32) and, for a backend that reads indices, the seed of the
// indices it ran on (workloads/validation_suite.hpp), so a point can be re-run alone.
struct SingleOpPrediction {
  double time_s = 0;
  std::optional<std::uint64_t> index_seed;
};
struct SingleOpModel {
  std::string machine_name;  // the chip or GPU its machine file names
  std::string machine_file;
  std::function<SingleOpPrediction(const std::string& op, const OpShape& shape)> predict;
};

// How a framework drives the device over an epoch (results/epoch_execution.hpp): the run's epoch in,
// its cost with host calls, host-link transfers and fixed costs out, each figure from the machine file.
// An empty function: the family states no execution model, and an epoch is the sum of its steps.
using EpochExecutionModel = std::function<EpochExecution(const EpochDriving& run)>;

struct BackendMode {
  std::string name;
  bool is_default = false;
  std::string description;  // one line
};

// What a backend runs on.
struct MachineChoice {
  bool in_name = false;                // the name carries a machine (ipu:MACHINE)
  std::string default_machine;         // the machine when the name leaves it out
  std::vector<std::string> shipped;    // machine files that ship with tilesim
  bool accepts_file = false;           // a machine file path works as well
  std::string runs_on;                 // without a machine in the name: what it runs on ("this host's cores")
};

// Whether this build, and for a GPU backend this host, can run the family.
struct Availability {
  bool optional = false;      // built only when CMake found its dependency (libtorch, nvcc)
  bool built = true;
  std::string detail;         // optional families: what was built ("libtorch 1.13.0 (ATen), loaded on use") or why not
  bool needs_device = false;  // runs on a device the host may lack (a CUDA GPU)
  bool device_present = false;
  std::string device;         // the device found, or why there is none (asked only when probed)
};

// Run settings that decide how a backend's rows are described.
struct TimingSettings {
  bool timing_only = false;  // simulated backends: cycles without moving the bytes
  int warmup = 0;            // measured backends: untimed calls, then
  int timed_calls = 0;       // timed calls (median reported)
};

// The declared facts of a family: data, no behaviour.
struct FamilyInfo {
  std::string family;         // "ipu": the text before the first ':' of its names
  std::string grammar;        // "ipu[:MACHINE][:static|:dynamic]"
  ResultKind kind = ResultKind::measured;
  std::string summary;        // one line: what it is
  std::vector<BackendMode> modes;
  std::string help;           // its part of --backends' help text
  std::string accepted;       // its part of the names listed when a name matches no family
  bool reads_input_values = true;   // false: predicts from shapes alone (a model)
  bool timing_only_applies = false; // --timing-only (and a sweep without verify) skips moving bytes
  bool writes_traces = false;       // --trace applies
  bool runs_training_steps = false; // runs the backward, loss and optimizer ops of a training step
  // Runs programs compiled for fixed shapes (the IPU, as PopTorch compiles them): mini-batches are
  // padded to one shape for it; the other families run each batch's exact shape.
  bool fixed_shapes = false;
  // The value dtypes its ops may have (ir/dtype.hpp names); a sweep asking another of it is refused
  // before any point runs.
  std::vector<std::string> value_dtypes = {"float32", "float16", "bfloat16"};
  std::string unchecked_verified;   // results.csv's verified for a row whose outputs were not checked
  std::string roofline_machine_family;  // the --machine FAMILY of `tilesim roofline` that applies to its rows ("" none)
  std::string roofline_machine_form;    // how that option names its machine ("ipu:NAME_OR_FILE"); "" for no own form
};

class BackendFamily {
 public:
  explicit BackendFamily(FamilyInfo info) : info_(std::move(info)) {}
  virtual ~BackendFamily() = default;
  BackendFamily(const BackendFamily&) = delete;
  BackendFamily& operator=(const BackendFamily&) = delete;

  const FamilyInfo& info() const { return info_; }
  const std::string& family() const { return info_.family; }
  ResultKind kind() const { return info_.kind; }
  // The default mode's name; "" for a family without modes.
  std::string default_mode() const;

  virtual MachineChoice machine_choice() const = 0;
  // `probe_device`: also ask the driver whether the device is there (can take a second).
  virtual Availability availability(bool probe_device) const;

  // One entry of --backends whose family is this one. Throws InputError naming the entry and what is
  // accepted (`accepted_by_all`: every family's names, for the errors that list them all).
  virtual BackendSpec parse(const std::string& item, const std::string& accepted_by_all) const = 0;
  // Reads the machine file (if any); throws InputError when the backend cannot run in this build or host.
  virtual std::unique_ptr<Backend> make(const BackendSpec& spec) const = 0;
  // The machine a point ran on when the backend returned no result for it (it did not fit): the
  // results.csv `machine` column. `backend` is one this family made.
  virtual std::string machine_name(const Backend& backend) const;

  // results.csv's `mode` of a row, and the sweep's one-line account of how its points run
  // ("simulated, timing-only (outputs not computed)").
  virtual std::string row_mode(const BackendSpec& spec, const TimingSettings& timing) const = 0;
  virtual std::string plan_text(const BackendSpec& spec, const TimingSettings& timing) const = 0;

  // A label for figures and tables ("Bow IPU (simulated)") for a backend name of this family as
  // results.csv holds it; std::nullopt when the name is not one this family labels (then it is taken
  // for a path to reference measurements).
  virtual std::optional<std::string> display_label(const std::string& name, const std::string& kind,
                                                   const std::string& mode) const = 0;

  // The roofline ceilings of the rows of `backend` (its canonical name); `machine` overrides the
  // machine the name implies ("" keeps it).
  virtual RooflineMachine ceilings(const BackendSpec& spec, const std::string& backend, const std::string& machine) const = 0;

  // The capabilities some families have; each throws InputError naming the backend when this one has not.
  // A workload's "parallel" section: the backend as a system of devices (backends/system_view.hpp).
  virtual std::unique_ptr<SystemView> system_view(const BackendSpec& spec) const;
  // `tilesim fit`: a step's per-tile memory, planned on the spec's machine.
  virtual StepMemoryFitter step_memory_fitter(const BackendSpec& spec) const;
  // `tilesim validate`: single ops of the measured grids, on the spec's machine and mode.
  virtual SingleOpModel single_op_model(const BackendSpec& spec) const;

  // Loader and scaling runs: the framework's execution model of an epoch on the spec's machine. Unlike the
  // capabilities above it never throws for a family without one: it is empty, and the run keeps the
  // epoch of its steps alone.
  virtual EpochExecutionModel epoch_execution_model(const BackendSpec& spec) const;

  // `tilesim machines`: one JSON object per shipped machine, and the text block that lists them.
  virtual nlohmann::json machine_summaries() const { return nlohmann::json::array(); }
  virtual std::string machine_table(const nlohmann::json& summaries) const {
    (void)summaries;
    return "";
  }

 private:
  FamilyInfo info_;
};

}  // namespace tilesim::backends
