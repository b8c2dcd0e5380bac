#include "models/gpu/gpu_machine.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "common/error.hpp"
#include "common/machine_files.hpp"
#include "common/machine_inheritance.hpp"
#include "common/machine_overrides.hpp"
#include "common/strict_json.hpp"
#include "models/gpu/gpu_system.hpp"

namespace tilesim::gpu {

namespace {

GpuMachine parse_resolved(const MachineDocument& resolved);

// Checks a base file before a derived file inherits from it, so its faults name the base (a system
// file's base is a system file, read as one).
void check_base(const nlohmann::json& document, const std::string& file) {
  if (is_gpu_system_document(document)) parse_resolved_gpu_system(MachineDocument{document, {file}, {}});
  else parse_resolved(MachineDocument{document, {file}, {}});
}

// A machine file, or a system file standing for one of its GPUs (`gpu-model:dgx-a100`).
GpuMachine parse_any(const MachineDocument& resolved) {
  if (is_gpu_system_document(resolved.document)) return one_gpu_of(parse_resolved_gpu_system(resolved));
  return parse_resolved(resolved);
}

}  // namespace

const std::vector<CalibrationFigure>& calibration_figures() {
  static const std::vector<CalibrationFigure> figures = {
      {"eager_host_floor_s", "gather", &GpuCalibration::host_gather_s},
      {"eager_host_floor_s", "scatter_add", &GpuCalibration::host_scatter_add_s},
      {"eager_host_floor_s", "scatter_max_min", &GpuCalibration::host_scatter_max_min_s},
      {"eager_host_floor_s", "zero_fill", &GpuCalibration::host_zero_fill_s},
      {"kernels", "launch_latency_s", &GpuCalibration::launch_latency_s},
      {"kernels", "dram_efficiency", &GpuCalibration::dram_efficiency},
      {"kernels", "l2_efficiency", &GpuCalibration::l2_efficiency},
      {"kernels", "gather_elements_per_sm_cycle", &GpuCalibration::gather_elements_per_sm_cycle},
      {"kernels", "atomic_add_elements_per_sm_cycle", &GpuCalibration::atomic_add_elements_per_sm_cycle},
      {"kernels", "atomic_cas_elements_per_sm_cycle", &GpuCalibration::atomic_cas_elements_per_sm_cycle},
      {"kernels", "contended_cas_retries_per_sm_cycle", &GpuCalibration::contended_cas_retries_per_sm_cycle},
  };
  return figures;
}

std::string gpu_machine_dir() {
  if (const char* env = std::getenv("TILESIM_GPU_MACHINE_DIR"); env && *env) return env;
  return TILESIM_GPU_MACHINE_DIR;
}

std::vector<std::string> shipped_gpu_machines() {
  // Single GPUs only: the system files (shipped_gpu_systems) list beside them.
  std::vector<std::string> machines;
  const std::vector<std::string> systems = shipped_gpu_systems();
  for (const auto& stem : json_file_stems(gpu_machine_dir()))
    if (std::find(systems.begin(), systems.end(), stem) == systems.end()) machines.push_back(stem);
  return machines;
}

namespace {

GpuMachine parse_resolved(const MachineDocument& resolved) {
  constexpr std::int64_t kMaxCount = std::int64_t{1} << 40;
  const std::string& file = resolved.files.front();
  ObjectReader root(resolved.document, file, "");
  GpuMachine m;
  m.file = file;
  m.provenance = MachineProvenance(resolved.files, resolved.stated_in);
  m.name = root.string("name");
  m.description = root.string("description");
  root.string_or("notes", "");
  m.fit_carried_over_from = root.string_or("fit_carried_over_from", "");

  FigureReader chip(root.object("chip"), m.provenance);
  m.sm_count = chip.integer("sm_count", 1, 1 << 16);
  m.sm_clock_hz = chip.number("sm_clock_hz", 1e6, 1e11);
  m.max_threads_per_sm = chip.integer("max_threads_per_sm", 1, 1 << 16);
  m.memory_bytes = chip.integer("memory_bytes", 1, kMaxCount);
  m.hbm_bytes_per_s = chip.number("hbm_bytes_per_s", 1e6, 1e16);
  m.l2_bytes = chip.integer("l2_bytes", 1, kMaxCount);
  m.l2_bytes_per_s = chip.number("l2_bytes_per_s", 1e6, 1e17);
  m.pcie_bytes_per_s = chip.number("pcie_bytes_per_s", 1e6, 1e14);
  chip.finish();

  FigureReader peak(root.object("peak_flops_per_s"), m.provenance);
  m.fp32_flops_per_s = peak.number("fp32", 1e6, 1e18);
  m.tf32_flops_per_s = peak.number("tf32", 1e6, 1e18);
  m.bf16_flops_per_s = peak.number("bf16", 1e6, 1e18);
  m.fp16_flops_per_s = peak.number("fp16", 1e6, 1e18);
  peak.finish();

  FigureReader software(root.object("software"), m.provenance);
  m.index_bytes = software.integer("index_bytes", 1, 16);
  software.finish();

  // Fitted figures: positive, and efficiencies at most 1 (no kernel beats the vendor peak).
  FigureReader kernels(root.object("kernels"), m.provenance);
  auto& c = m.calibration;
  c.launch_latency_s = kernels.number("launch_latency_s", 0.0, 1.0);
  c.dram_efficiency = kernels.number("dram_efficiency", 1e-6, 1.0);
  c.l2_efficiency = kernels.number("l2_efficiency", 1e-6, 1.0);
  c.gather_elements_per_sm_cycle = kernels.number("gather_elements_per_sm_cycle", 1e-9, 1e6);
  c.atomic_add_elements_per_sm_cycle = kernels.number("atomic_add_elements_per_sm_cycle", 1e-9, 1e6);
  c.atomic_cas_elements_per_sm_cycle = kernels.number("atomic_cas_elements_per_sm_cycle", 1e-9, 1e6);
  c.contended_cas_retries_per_sm_cycle = kernels.number("contended_cas_retries_per_sm_cycle", 1e-9, 1e6);
  m.same_address_atomic_add_s = kernels.number("same_address_atomic_add_s", 0.0, 1.0);
  kernels.finish();

  FigureReader gemm(root.object("gemm"), m.provenance);
  m.gemm.efficiency = gemm.number("efficiency", 1e-3, 1.0);
  m.gemm.cublas_tile_rows = gemm.integer("cublas_tile_rows", 1, 4096);
  m.gemm.cublas_tile_cols = gemm.integer("cublas_tile_cols", 1, 4096);
  m.gemm.grouped_tile_rows = gemm.integer("grouped_tile_rows", 1, 4096);
  m.gemm.grouped_tile_cols = gemm.integer("grouped_tile_cols", 1, 4096);
  m.gemm.split_k_min_depth = gemm.integer("split_k_min_depth", 1, 1 << 20);
  gemm.finish();

  FigureReader host(root.object("eager_host_floor_s"), m.provenance);
  c.host_gather_s = host.number("gather", 0.0, 1.0);
  c.host_scatter_add_s = host.number("scatter_add", 0.0, 1.0);
  c.host_scatter_max_min_s = host.number("scatter_max_min", 0.0, 1.0);
  c.host_zero_fill_s = host.number("zero_fill", 0.0, 1.0);
  m.eager.aten_call_s = host.number("aten_call", 0.0, 1.0);
  m.eager.aten_view_call_s = host.number("aten_view_call", 0.0, 1.0);
  m.eager.module_call_s = host.number("module_call", 0.0, 1.0);
  m.eager.propagate_call_s = host.number("propagate_call", 0.0, 1.0);
  m.eager.autograd_node_s = host.number("autograd_node", 0.0, 1.0);
  m.eager.autograd_backward_node_s = host.number("autograd_backward_node", 0.0, 1.0);
  m.eager.segment_matmul_call_s = host.number("segment_matmul_call", 0.0, 1.0);
  m.eager.segment_matmul_per_segment_s = host.number("segment_matmul_per_segment", 0.0, 1.0);
  m.eager.optimizer_step_call_s = host.number("optimizer_step_call", 0.0, 1.0);
  m.eager.optimizer_per_parameter_s = host.number("optimizer_per_parameter", 0.0, 1.0);
  host.finish();

  FigureReader stack(root.object("framework"), m.provenance);
  m.framework.pytorch = stack.text("pytorch");
  m.framework.host_cpu = stack.text("host_cpu");
  using Framework = GpuMachine::Framework;
  const std::string optimizer = stack.one_of(
      "optimizer", {Framework::word(Framework::Optimizer::per_parameter_loop), Framework::word(Framework::Optimizer::foreach)});
  m.framework.optimizer = optimizer == Framework::word(Framework::Optimizer::foreach) ? Framework::Optimizer::foreach
                                                                                      : Framework::Optimizer::per_parameter_loop;
  m.framework.zero_grad_fills =
      stack.one_of("zero_grad", {Framework::zero_grad_word(true), Framework::zero_grad_word(false)}) == Framework::zero_grad_word(true);
  stack.finish();

  if (root.has("host_input")) {
    FigureReader input(root.object("host_input"), m.provenance);
    GpuMachine::HostInput h;
    h.collate_per_batch_s = input.number("collate_per_batch_s", 0.0, 1.0);
    h.collate_per_graph_s = input.number("collate_per_graph_s", 0.0, 1.0);
    h.tensors_per_batch = input.integer("tensors_per_batch", 0, 1000);
    input.finish();
    m.host_input = h;
  }

  root.finish();
  return m;
}

}  // namespace

GpuMachine parse_gpu_machine(const nlohmann::json& document, const std::string& file) {
  return parse_any(resolve_machine_document(document, file, gpu_machine_dir(), "GPU", check_base));
}

GpuMachine load_gpu_machine(const std::string& name_or_path) {
  // A what-if machine (common/machine_overrides.hpp): its base, then its figures.
  const auto what_if = split_machine_overrides(name_or_path, "GPU");
  const std::string base = what_if ? what_if->base : name_or_path;
  std::string path = base;
  if (!names_a_file(base)) {
    path = gpu_machine_dir() + "/" + base + ".json";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      std::vector<std::string> known = shipped_gpu_machines();
      for (const auto& n : shipped_gpu_systems()) known.push_back(n + " (a system: one of its GPUs)");
      throw InputError("unknown GPU machine \"" + base + "\": expected " +
                       shipped_names_text(known, gpu_machine_dir(), "TILESIM_GPU_MACHINE_DIR") +
                       " or a path to a machine file (*.json)");
    }
  }
  MachineDocument document = read_machine_document(path, gpu_machine_dir(), "GPU", check_base);
  if (what_if) document = apply_machine_overrides(std::move(document), *what_if, "GPU");
  return parse_any(document);
}

}  // namespace tilesim::gpu
