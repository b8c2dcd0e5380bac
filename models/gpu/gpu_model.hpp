#pragma once
// Analytic GPU model: predicted seconds for the ops of the op graph on an NVIDIA GPU described by a
// machine file (models/gpu/machines/*.json): predict() for the calibrated gather/scatter GpuOps,
// predict_op() for any op kind. Every prediction is "modeled" and names its mode:
//   kernel: device time of the kernels alone (what CUDA events around the kernels would measure);
//   eager:  one eager PyTorch call per op, what torch.utils.benchmark measures: a host floor per op
//           kind (Python, dispatcher, launch) overlapping with, or followed by, the kernel time.
// Structure: roofline plus overheads (bytes at each level / bandwidth, FLOPs / peak, atomics /
// atomic throughput, launch latency), never a regression on sizes.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/op_graph.hpp"

namespace tilesim::gpu {

enum class GpuOp { gather, scatter_add, scatter_max, scatter_min, zero_fill };
std::string to_string(GpuOp op);

enum class GpuMode { kernel, eager };
std::string to_string(GpuMode mode);

struct GpuMachine;  // defined in gpu_machine.hpp

// One kernel of an op as eager PyTorch launches it.
struct GpuKernel {
  std::string name;        // "index_select", "fill_out", "scatter_add_", ...
  double time_s = 0;       // launch latency plus the kernel's work
  double hbm_bytes = 0;    // traffic that reaches DRAM
  double l2_bytes = 0;     // all traffic (every access passes through L2)
  std::string limiter;     // the largest term of this kernel's time
  nlohmann::json to_json() const;
};

struct GpuPrediction {
  GpuMode mode = GpuMode::kernel;
  std::string call;         // the eager PyTorch / PyG call modeled, e.g. "torch.nn.functional.linear"
  double time_s = 0;        // what the mode reports
  double kernel_s = 0;      // device time of the kernels
  double host_floor_s = 0;  // eager only: the per-call host floor of this op kind
  std::string limiter;      // what bounds the time: "host" (eager), "launch", "dram", "l2", "element_rate", "atomics", "contention", "compute", "pcie"
  double flops = 0;
  double hbm_bytes = 0;         // DRAM traffic over all kernels
  double l2_bytes = 0;          // traffic through L2 over all kernels
  double footprint_bytes = 0;   // distinct bytes one call touches (its tensors)
  double l2_hit_fraction = 0;   // share of the traffic served by L2 in back-to-back calls
  std::vector<GpuKernel> kernels;
  // The ATen calls PyTorch dispatches for the op (recorded, models/gpu/eager_calls.hpp) with the op's
  // sizes, and how many of the Python-level ones launch kernels; null / 0 for ops without a record.
  nlohmann::json aten_calls;
  int python_kernel_calls = 0;
  // eager: the call waits for the GPU (a copy to the host), so its host and device times add up.
  bool host_waits_for_device = false;
  nlohmann::json to_json() const;
};

// The calibrated GpuOp that runs an op-graph op (gather -> index_select, scatter_add -> torch_scatter
// sum, scatter_max -> torch_scatter max); std::logic_error for the other kinds (predict_op covers them).
GpuOp gpu_op_for(OpKind kind);

// Share of an op's traffic that L2 serves when the op is called back to back and its tensors
// (footprint_bytes, reused call after call by PyTorch's caching allocator) compete for an L2 of
// capacity_bytes. 1 while the footprint fits; beyond it, random replacement: the hit fraction h solves
// h = exp(-(1 - h) * footprint / capacity) (each miss evicts a random line, and a line survives the
// (1 - h) * footprint bytes of misses between two uses of it).
double l2_hit_fraction(double footprint_bytes, double capacity_bytes);

// `shape` uses the hydronet naming of ir/op_graph.hpp (scatter_max/min as scatter_add; zero_fill fills
// num_outputs x num_features).
GpuPrediction predict(GpuOp op, const OpShape& shape, DType dtype, const GpuMachine& machine, GpuMode mode);

// The optimizer_step ops of one training step that torch.optim's foreach implementation updates with
// the same multi-tensor kernels (one optimizer's settings, one dtype): every parameter's element count
// in graph order, and which of them an op updates. The op at position 0 carries the step's kernel
// launches and its once-per-step host work; every op carries its own bytes and per-parameter host work.
struct ForeachStep {
  std::vector<std::int64_t> parameter_elements;
  std::size_t position = 0;
};
// The ForeachStep of every optimizer_step op of `graph`, by op index.
std::map<std::size_t, ForeachStep> foreach_steps(const OpGraph& graph);

// Any op of the op graph (ir/op_graph.hpp) as eager PyTorch 1.13 with PyG 2.x, torch_scatter and pyg-lib
// runs it: gather, scatter_add and scatter_max through predict() above (the calibrated kinds), and
//   scatter_mean    torch_scatter.scatter_mean: scatter_sum, ones, scatter_sum of the ones (the count),
//                   count[count < 1] = 1, true_divide_ (8 kernels)
//   degree_count    torch_geometric.utils.degree: zeros, ones, scatter_add_ of the ones
//   matmul          torch.nn.functional.linear: one cuBLAS GEMM (the bias fused as cuBLASLt's epilogue)
//   segment_matmul  pyg_lib.ops.segment_matmul: sizes from the pointer (copied to the host, which
//                   waits for the GPU), one pinned copy of the GEMM arguments, one CUTLASS grouped GEMM
//   unary, binary   the elementwise ATen calls PyG makes for the function (one kernel each)
//   cast            tensor.to(dtype): one elementwise copy kernel, the input read at its dtype's bytes and the
//                   output written at the op's (a scale folded in)
// and the kinds of a training step, as autograd and torch.optim launch them (gpu_training_model.cpp,
// gpu_optimizer_model.cpp; models/gpu/README.md, "Training steps"):
//   transposed matmul  torch.mm with a transposed operand: the same GEMM as matmul
//   segment_matmul, transposed  pyg_lib's autograd: the input's gradient segment_matmul(grad, ptr, W^T)
//                   (the forward's kernels); the weight's gradient size_from_ptr(ptr).cpu(), one cuBLAS
//                   GEMM x_s^T @ grad_s per segment (a fill for an empty one) and a torch.stack copy
//   unary_grad      the backward kernels of each forward call of the function (threshold_backward, ...)
//   sum_to          one ATen sum (reduce kernel) down to the broadcast shape
//   loss            cross_entropy: log_softmax, nll_loss; mse: mse_loss, mean
//   loss_grad       the backward's seed, then nll_loss_backward (zeros, kernel) and
//                   log_softmax_backward_data, or mse_loss_backward (zeros, kernel)
//   optimizer_step  this parameter's share of torch.optim's foreach SGD / Adam (`step`: the parameters
//                   updated together; none: the op's parameter alone)
// Only the op's kind, shapes, dtype and function are read: a chained graph needs no values.
// Throws std::invalid_argument for a size below 1 or a dtype the model does not know.
GpuPrediction predict_op(const Op& op, const GpuMachine& machine, GpuMode mode, const ForeachStep* step = nullptr);

// Compute time of a GEMM whose output is cut into `tiles` threadblock tiles of tile_rows x tile_cols,
// each accumulating over `depth`: the SMs take the tiles in waves (one tile per SM at a time), and a
// tile runs at its SM's share of the dtype's peak times gemm.efficiency. Small GEMMs are wave-bound
// (one wave of partly empty SMs); tiles larger than the matrix cost their full size.
double gemm_compute_s(double tiles, double tile_rows, double tile_cols, double depth, DType dtype, const GpuMachine& machine);

// How many ways cuBLAS splits a GEMM's inner dimension (`depth`) when its `tiles` output tiles leave
// SMs idle: as many splits as fill the SMs once, each keeping at least gemm.split_k_min_depth of the
// depth; 1 when the tiles fill the SMs or the depth is too short to split. Each split computes a
// partial output tile over depth / splits, and a second kernel sums the partials. (cuBLAS's own choice
// comes from heuristics it does not publish; this rule follows the shapes measured on an H100 that
// models/gpu/README.md lists: every long-K shape ran a CUTLASS SIMT kernel plus a split-K reduction.)
double split_k_factor(double tiles, double depth, const GpuMachine& machine);

}  // namespace tilesim::gpu
