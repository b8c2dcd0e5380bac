#pragma once
// GPU machine files (models/gpu/machines/*.json): the vendor figures of an NVIDIA GPU, the software
// stack's constants and the model's efficiency, rate and host-floor figures, each given as
// {"value": ..., "source": "..."} so every number says where it came from. Format: models/gpu/README.md.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/machine_provenance.hpp"

namespace tilesim::gpu {

// The figures `tilesim calibrate-model` fits to measurements (models/gpu/gpu_fit.hpp). Rates are per
// SM per SM clock cycle and efficiencies are shares of a vendor peak, so a fit on one GPU carries over
// to another through that GPU's own SM count, clock and bandwidths.
struct GpuCalibration {
  // Eager PyTorch host floor per call (Python, dispatcher, allocator, launch), by op kind.
  double host_gather_s = 0;           // index_select
  double host_scatter_add_s = 0;      // torch_scatter.scatter(reduce='sum')
  double host_scatter_max_min_s = 0;  // torch_scatter.scatter(reduce='max'/'min')
  double host_zero_fill_s = 0;        // torch.zeros
  // Device time of one kernel beyond its work when kernels run back to back (launch, ramp, tail).
  double launch_latency_s = 0;
  double dram_efficiency = 0;  // achieved share of hbm_bytes_per_s by streaming kernels
  double l2_efficiency = 0;    // achieved share of l2_bytes_per_s by the same kernels when they hit L2
  // Achieved element rates of the index-driven kernels (one thread per element, 64-bit index maths).
  double gather_elements_per_sm_cycle = 0;      // index_select and torch_scatter's arg kernel
  double atomic_add_elements_per_sm_cycle = 0;  // ATen scatter_add_ (fp32 atomicAdd)
  double atomic_cas_elements_per_sm_cycle = 0;  // torch_scatter max/min (atomicCAS loop)
  // Failed-and-retried CAS attempts the chip serves per SM cycle when updates collide on an address.
  double contended_cas_retries_per_sm_cycle = 0;
};

struct GpuMachine {
  std::string name;
  std::string description;
  std::string file;                   // path it was read from
  std::string fit_carried_over_from;  // empty, or the machine whose fitted figures this file copies
  MachineProvenance provenance;       // every figure read, with its source and file, for reports

  // Chip (vendor specifications).
  std::int64_t sm_count = 0;
  double sm_clock_hz = 0;                // boost clock
  std::int64_t max_threads_per_sm = 0;   // resident threads per SM
  std::int64_t memory_bytes = 0;
  double hbm_bytes_per_s = 0;
  std::int64_t l2_bytes = 0;
  double l2_bytes_per_s = 0;
  double pcie_bytes_per_s = 0;  // host link, one direction (pinned host-to-device copies)

  // Peak dense FLOP/s by dtype (vendor).
  double fp32_flops_per_s = 0;
  double tf32_flops_per_s = 0;
  double bf16_flops_per_s = 0;
  double fp16_flops_per_s = 0;

  // Software stack (eager PyTorch + torch_scatter).
  std::int64_t index_bytes = 0;  // torch index tensors are int64

  // Same-address fp32 atomicAdd serialisation: seconds per update to one address (derived, not fitted:
  // the hydronet grid never contends enough to show it).
  double same_address_atomic_add_s = 0;

  GpuCalibration calibration;

  // Dense matrix products (section "gemm"): the share of the peak a tile reaches on its SM, and the
  // output tile each threadblock computes, for cuBLAS (matmul) and pyg-lib's CUTLASS grouped GEMM
  // (segment_matmul). Not fitted: no matmul measurement backs them (sources in the files).
  struct Gemm {
    double efficiency = 0;
    std::int64_t cublas_tile_rows = 0, cublas_tile_cols = 0;
    std::int64_t grouped_tile_rows = 0, grouped_tile_cols = 0;
    std::int64_t split_k_min_depth = 0;  // cuBLAS split-K: the least inner depth one split keeps
  } gemm;

  // Eager host floors of calls the hydronet data do not cover (section "eager_host_floor_s", beside
  // the fitted ones; not fitted, sources in the files): one ATen call from Python (elementwise, addmm,
  // fill), pyg-lib's segment_matmul as a fixed part plus a part per segment, and torch.optim's step()
  // beyond its ATen calls as a fixed part plus a part per parameter (Python bookkeeping).
  struct EagerCalls {
    double aten_call_s = 0;
    // Python-level calls that launch no kernel (views, allocations), nn.Module __call__ overhead,
    // MessagePassing.propagate's Python work, and the extra host time of a call that records autograd
    // history (grad mode, an input that requires grad): models/gpu/eager_calls.hpp.
    double aten_view_call_s = 0;
    double module_call_s = 0;
    double propagate_call_s = 0;
    double autograd_node_s = 0;
    // A backward node's host time beyond the ATen calls it makes (autograd's engine: the node's
    // inputs, its device guard and stream, handing the result on), charged per node autograd runs.
    double autograd_backward_node_s = 0;
    double segment_matmul_call_s = 0;
    double segment_matmul_per_segment_s = 0;
    double optimizer_step_call_s = 0;
    double optimizer_per_parameter_s = 0;
  } eager;

  // How the software stack drives the GPU in a training step (section "framework"): the PyTorch
  // release and host CPU the host figures stand for, and what that release's torch.optim does by
  // default, which differs between 1.x and 2.x.
  struct Framework {
    std::string pytorch;   // the release, as stated ("1.13")
    std::string host_cpu;  // the host the per-call figures stand for
    // torch.optim's update: one loop of single-tensor ATen calls per parameter (foreach=False, the
    // default before 2.0), or the torch._foreach_* calls over all parameters at once (2.x on CUDA).
    enum class Optimizer { per_parameter_loop, foreach } optimizer = Optimizer::foreach;
    // optimizer.zero_grad(): true when it fills every gradient with zeros (set_to_none=False, the
    // default before 2.0), so AccumulateGrad then adds each new gradient into it; false when it sets
    // them to None and AccumulateGrad takes the new gradient as it is.
    bool zero_grad_fills = false;
    // The words the machine file and report.json use for them.
    static const char* word(Optimizer o) { return o == Optimizer::foreach ? "foreach" : "per_parameter_loop"; }
    static const char* zero_grad_word(bool fills) { return fills ? "fill" : "set_to_none"; }
  } framework;

  // How the host makes a mini-batch of small graphs and hands it over (section "host_input", optional):
  // PyG's DataLoader collating in the training loop's thread, then Batch.to(device), one copy per
  // tensor. Priced by the eager execution model (models/gpu/host_input.hpp); absent, no batch
  // preparation is priced and the report says so.
  struct HostInput {
    double collate_per_batch_s = 0;   // the DataLoader's and the collation's fixed work per batch
    double collate_per_graph_s = 0;   // per graph: the dataset's item, its offsets and its batch-vector piece
    std::int64_t tensors_per_batch = 0;  // the batch's tensors Batch.to copies (x, edge_index, y, batch, ptr)
  };
  std::optional<HostInput> host_input;

  double sm_cycles_per_s() const { return static_cast<double>(sm_count) * sm_clock_hz; }
  std::int64_t resident_threads() const { return sm_count * max_threads_per_sm; }
};

// Loads "a100-40gb", "a100-80gb", "h100-sxm", "h200" (shipped machine files) or a path to a machine
// file; a file with "base" derives from another GPU machine file (common/machine_inheritance.hpp). A GPU
// system file ("dgx-a100", models/gpu/gpu_system.hpp) loads as one of its GPUs (gpu::one_gpu_of).
// Throws tilesim::InputError naming the file and JSON path on any problem (unknown key, missing
// source, bad value, unknown machine name).
GpuMachine load_gpu_machine(const std::string& name_or_path);
// `document` as read from `file` (a "base" is resolved relative to it).
GpuMachine parse_gpu_machine(const nlohmann::json& document, const std::string& file);

// The directory holding the shipped GPU machine files (TILESIM_GPU_MACHINE_DIR overrides it).
std::string gpu_machine_dir();
// Names of the shipped single-GPU machine files, sorted (gpu_system.hpp lists the systems).
std::vector<std::string> shipped_gpu_machines();

// The fitted figures, as (section, key) in a machine file and the member of GpuCalibration they set,
// in the order calibrate-model reports and fits them.
struct CalibrationFigure {
  const char* section;
  const char* key;
  double GpuCalibration::*member;
};
const std::vector<CalibrationFigure>& calibration_figures();

}  // namespace tilesim::gpu
