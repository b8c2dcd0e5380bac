// gpu-model: the analytic GPU model (models/gpu), on a shipped machine or a machine file, predicting
// device time (kernel, the default) or one eager PyTorch call per op (eager: the host floor added).
#include "backends/families.hpp"
#include "backends/machine_ceilings.hpp"
#include "backends/machine_listings.hpp"
#include "backends/modeled_family.hpp"
#include "backends/system_view.hpp"
#include "common/error.hpp"
#include "models/gpu/gpu_backend.hpp"
#include "models/gpu/gpu_system.hpp"
#include "models/gpu/host_input.hpp"

namespace tilesim::backends {

namespace {

FamilyInfo gpu_model_info() {
  FamilyInfo i;
  i.family = "gpu-model";
  i.grammar = "gpu-model[:MACHINE][:eager|:eager-nograd|:kernel]";
  i.kind = ResultKind::modeled;
  i.summary = "an analytic roofline-plus-overheads model of the kernels eager PyTorch launches on a GPU";
  i.modes = {{"kernel", true, "device time of the op's kernels"},
             {"eager", false, "one eager PyTorch call per op: device time plus the per-call host floor "
                              "(what torch.utils.benchmark measures), in grad mode (PyTorch's default)"},
             {"eager-nograd", false, "eager under torch.no_grad(): no autograd bookkeeping on the calls"}};
  i.help = "gpu-model:MACHINE[:eager|:eager-nograd|:kernel] (a100-40gb, a100-80gb, h100-sxm, h200, v100-16gb, the 8-GPU system "
           "dgx-a100 (one of its GPUs; a workload's \"parallel\" section spreads over them) or a machine file)";
  i.accepted = "gpu-model, gpu-model:MACHINE (a100-40gb, a100-80gb, h100-sxm, h200, v100-16gb or a machine file path) or "
               "gpu-model:MACHINE:eager|eager-nograd|kernel";
  i.reads_input_values = false;
  // Training steps: the backward, loss and optimizer kinds are modeled as autograd and torch.optim
  // launch them (models/gpu/README.md, "Training steps"); no values, so the steps' losses are null.
  i.runs_training_steps = true;
  i.unchecked_verified = "modeled";
  i.roofline_machine_family = "gpu-model";
  i.roofline_machine_form = "gpu-model:NAME_OR_FILE";
  return i;
}

class GpuModelFamily final : public ModeledFamily {
 public:
  GpuModelFamily() : ModeledFamily(gpu_model_info(), "a100-40gb") {}

  MachineChoice machine_choice() const override {
    MachineChoice m = named_machine_choice();
    m.shipped = gpu::shipped_gpu_machines();
    for (const auto& system : gpu::shipped_gpu_systems()) m.shipped.push_back(system);
    return m;
  }

  std::unique_ptr<Backend> make(const BackendSpec& spec) const override {
    const bool eager = spec.mode == "eager" || spec.mode == "eager-nograd";
    return std::make_unique<gpu::GpuModelBackend>(gpu::load_gpu_machine(spec.machine), eager ? gpu::GpuMode::eager : gpu::GpuMode::kernel,
                                                  spec.name(), /*grad_mode=*/spec.mode == "eager");
  }

  std::string machine_name(const Backend& backend) const override {
    return static_cast<const gpu::GpuModelBackend&>(backend).machine().name;
  }

  std::string row_mode(const BackendSpec& spec, const TimingSettings&) const override { return spec.mode; }

  std::string plan_text(const BackendSpec& spec, const TimingSettings&) const override {
    return "modeled, " + spec.mode + " mode";
  }

  // "gpu-model:a100-40gb:eager" -> "A100-40GB model (eager)"; a machine file by its stem.
  std::optional<std::string> display_label(const std::string& name, const std::string&, const std::string& mode) const override {
    std::string rest = name.size() > 10 ? name.substr(10) : default_machine();
    const std::string named = take_mode(rest);
    const std::string m = !mode.empty() ? mode : !named.empty() ? named : "kernel";
    return upper_case(machine_stem(rest)) + " model (" + m + ")";
  }

  RooflineMachine ceilings(const BackendSpec& spec, const std::string& backend, const std::string& machine) const override {
    return gpu_model_ceilings(spec, backend, machine);
  }

  std::unique_ptr<SystemView> system_view(const BackendSpec& spec) const override { return gpu_system_view(spec); }

  // The calibrated op model, in the spec's mode (eager: one framework call, host included).
  SingleOpModel single_op_model(const BackendSpec& spec) const override {
    const auto machine = std::make_shared<const gpu::GpuMachine>(gpu::load_gpu_machine(spec.machine));
    const gpu::GpuMode mode = spec.mode == "kernel" ? gpu::GpuMode::kernel : gpu::GpuMode::eager;
    return {machine->name, machine->file, [machine, mode](const std::string& op_name, const OpShape& shape) {
      for (const gpu::GpuOp op : {gpu::GpuOp::gather, gpu::GpuOp::scatter_add, gpu::GpuOp::scatter_max, gpu::GpuOp::scatter_min})
        if (gpu::to_string(op) == op_name) return SingleOpPrediction{gpu::predict(op, shape, DType::float32, *machine, mode).time_s, {}};
      throw InputError("", "", "an op the GPU model has measured calls of (gather, scatter_add, scatter_max, scatter_min)",
                       "\"" + op_name + "\"");
    }};
  }

  // Eager PyTorch's epoch (models/gpu/host_input.hpp) on the machine's "host_input" figures and the
  // eager call floor, reported with their sources. Kernel mode predicts device time alone: no model.
  EpochExecutionModel epoch_execution_model(const BackendSpec& spec) const override {
    if (spec.mode == "kernel") return {};
    const auto machine = std::make_shared<const gpu::GpuMachine>(gpu::load_gpu_machine(spec.machine));
    const nlohmann::json all = machine->provenance.figures_json(true);
    nlohmann::json figures = all.value("host_input", nlohmann::json::object());
    if (machine->host_input) {
      figures["aten_call"] = all.at("eager_host_floor_s").at("aten_call");
      figures["pcie_bytes_per_s"] = all.at("chip").at("pcie_bytes_per_s");
    }
    return [machine, figures](const EpochDriving& run) {
      EpochExecution e = gpu::eager_epoch(*machine, run);
      e.figures = figures;
      return e;
    };
  }

  nlohmann::json machine_summaries() const override { return gpu_machine_summaries(); }
  std::string machine_table(const nlohmann::json& summaries) const override { return gpu_machine_table(summaries); }
};

}  // namespace

const BackendFamily& gpu_model_family() {
  static const GpuModelFamily family;
  return family;
}

}  // namespace tilesim::backends
