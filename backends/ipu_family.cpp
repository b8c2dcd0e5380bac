// ipu: the simulated IPU (models/ipu), on a shipped machine or a machine file, with a model's gathers
// and scatters dynamic (poplibs', the default) or compiled into the exchange (static).
#include <cctype>
#include <memory>

#include "backends/families.hpp"
#include "backends/machine_ceilings.hpp"
#include "backends/machine_listings.hpp"
#include "backends/modeled_family.hpp"
#include "backends/system_view.hpp"
#include "common/error.hpp"
#include "models/ipu/host_execution.hpp"
#include "models/ipu/ipu_backend.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/planning/step_memory.hpp"
#include "workloads/validation_suite.hpp"

namespace tilesim::backends {

namespace {

FamilyInfo ipu_info() {
  FamilyInfo i;
  i.family = "ipu";
  i.grammar = "ipu[:MACHINE][:static|:dynamic]";
  i.kind = ResultKind::simulated;
  i.summary = "a cycle-approximate BSP model of the IPU on SystemC: tiles, workers, syncs and a compiled exchange, "
              "each op planned onto the tiles";
  i.modes = {{"dynamic", true, "gathers and scatters as poplibs' MultiSlice / MultiUpdate, every index read at run time "
                               "(what PopTorch runs, and what the Bow measurements are)"},
             {"static", false, "a model's graph edges compiled into the exchange (ops whose indices are known when the "
                               "program is compiled)"}};
  i.help = "ipu (= ipu:bow), ipu:MACHINE[:static] (bow, mk2, mk1, the 4-IPU system bow-2000 or a machine file; :static "
           "compiles a model's graph edges into the exchange)";
  i.accepted = "ipu, ipu:MACHINE (bow, mk2, mk1, the 4-IPU system bow-2000 or a machine file path), ipu:MACHINE:static "
               "(a model's graph edges compiled into the exchange)";
  i.timing_only_applies = true;
  i.writes_traces = true;
  i.unchecked_verified = "timing-only";
  i.roofline_machine_family = "ipu";
  i.roofline_machine_form = "ipu:NAME_OR_FILE";
  // The whole step as one program per step: forward, loss, backward and optimizer ops on the tiles,
  // with the step's live tensors checked against the SRAM (models/ipu/planning/step_memory.hpp).
  i.runs_training_steps = true;
  i.fixed_shapes = true;
  // The value types the tiles hold (models/ipu/README.md, "Value types"): float16 needs the machine
  // file's half codelet costs (every shipped chip has them); bfloat16 is not an IPU type.
  i.value_dtypes = {to_string(DType::float32), to_string(DType::float16)};
  return i;
}

class IpuFamily final : public ModeledFamily {
 public:
  IpuFamily() : ModeledFamily(ipu_info(), "bow") {}

  MachineChoice machine_choice() const override {
    MachineChoice m = named_machine_choice();
    m.shipped = ipu::shipped_ipu_machines();
    return m;
  }

  // "ipu:static" is "ipu:bow:static": the index mode alone names the default chip.
  bool mode_alone_names_default_machine() const override { return true; }

  std::unique_ptr<Backend> make(const BackendSpec& spec) const override {
    return std::make_unique<ipu::IpuBackend>(ipu::load_ipu_machine(spec.machine), spec.name(),
                                             spec.mode == "static" ? ipu::IndexMode::static_ : ipu::IndexMode::dynamic);
  }

  std::string machine_name(const Backend& backend) const override {
    return static_cast<const ipu::IpuBackend&>(backend).machine().chip.name;
  }

  std::string row_mode(const BackendSpec&, const TimingSettings& timing) const override {
    return timing.timing_only ? "timing-only" : "functional";
  }

  std::string plan_text(const BackendSpec&, const TimingSettings& timing) const override {
    return std::string("simulated, ") + (timing.timing_only ? "timing-only (outputs not computed)" : "functional (outputs checked)");
  }

  // "ipu:bow" -> "Bow IPU (simulated)"; a machine file by its stem.
  std::optional<std::string> display_label(const std::string& name, const std::string& kind, const std::string&) const override {
    std::string machine = machine_stem(name == "ipu" ? default_machine() : name.substr(4));
    if (!machine.empty()) machine[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(machine[0])));
    return machine + " IPU (" + (kind.empty() ? "simulated" : kind) + ")";
  }

  RooflineMachine ceilings(const BackendSpec& spec, const std::string& backend, const std::string& machine) const override {
    return ipu_ceilings(spec, backend, machine);
  }

  std::unique_ptr<SystemView> system_view(const BackendSpec& spec) const override { return ipu_system_view(spec); }

  // The planner's accounting of the step's live tensors against the tiles' SRAM, without running it.
  StepMemoryFitter step_memory_fitter(const BackendSpec& spec) const override {
    const auto backend = std::make_shared<ipu::IpuBackend>(ipu::load_ipu_machine(spec.machine), spec.name(),
                                                           spec.mode == "static" ? ipu::IndexMode::static_ : ipu::IndexMode::dynamic);
    return [backend](const OpGraph& graph) {
      const ipu::StepMemory memory = backend->plan_memory(graph);
      ipu::check_step_memory(graph, memory, backend->machine());
      return StepMemoryFit{memory.peak_tile_bytes(), memory.peak_op};
    };
  }

  // A timing-only run of the one op on indices drawn from the point's own seed.
  SingleOpModel single_op_model(const BackendSpec& spec) const override {
    const auto machine = std::make_shared<const ipu::IpuMachine>(ipu::load_ipu_machine(spec.machine));
    return {machine->chip.name, machine->file, [machine](const std::string& op_name, const OpShape& shape) {
      OpKind kind = OpKind::gather;
      if (op_name == "scatter_add") kind = OpKind::scatter_add;
      else if (op_name != "gather") throw InputError("", "", "an op the IPU model runs (gather, scatter_add)", "\"" + op_name + "\"");
      OpGraph graph;
      const Op& op = graph.add_gather_scatter(op_name, kind, DType::float32, shape);
      SingleOpPrediction p;
      p.index_seed = analysis::point_index_seed(shape);
      p.time_s = ipu::simulate_op_timing(op, analysis::point_indices(op, *p.index_seed), *machine).time_s;
      return p;
    }};
  }

  // PopTorch's epoch on the machine's "host" figures (models/ipu/host_execution.hpp), reported with their
  // sources; a machine file without that section states no execution model.
  EpochExecutionModel epoch_execution_model(const BackendSpec& spec) const override {
    const ipu::IpuMachine machine = ipu::load_ipu_machine(spec.machine);
    if (!machine.host) return {};
    const nlohmann::json figures = machine.provenance.figures_json(true).value("host", nlohmann::json::object());
    return [host = *machine.host, figures](const EpochDriving& run) {
      EpochExecution e = ipu::poptorch_epoch(host, run);
      e.figures = figures;
      return e;
    };
  }

  nlohmann::json machine_summaries() const override { return ipu_machine_summaries(); }
  std::string machine_table(const nlohmann::json& summaries) const override { return ipu_machine_table(summaries); }
};

}  // namespace

const BackendFamily& ipu_family() {
  static const IpuFamily family;
  return family;
}

}  // namespace tilesim::backends
