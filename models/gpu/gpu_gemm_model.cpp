// Dense products on the GPU: torch.nn.functional.linear (one cuBLAS GEMM) and pyg-lib's segment_matmul
// (one CUTLASS grouped GEMM after its argument set-up). A GEMM kernel costs launch + the larger of its
// memory term (every operand read once, the output written once) and its compute term
// (gemm_compute_s: tiles in waves over the SMs), so large GEMMs follow the roofline and small ones sit
// on a wave of partly idle SMs plus the launch. cuBLAS splits the inner dimension of a GEMM whose
// output tiles leave SMs idle (split_k_factor) and adds a reduction kernel; the grouped GEMM does not.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/gpu/gpu_kernel_list.hpp"

namespace tilesim::gpu {

double gemm_compute_s(double tiles, double tile_rows, double tile_cols, double depth, DType dtype, const GpuMachine& machine) {
  if (!(tiles >= 1) || !(tile_rows >= 1) || !(tile_cols >= 1) || !(depth >= 1))
    throw std::invalid_argument("gemm_compute_s: tiles, tile sizes and depth must be at least 1");
  const double sms = static_cast<double>(machine.sm_count);
  const double waves = std::ceil(tiles / sms);
  const double sm_flops_per_s = gemm_peak_flops_per_s(dtype, machine) / sms * machine.gemm.efficiency;
  return waves * 2.0 * tile_rows * tile_cols * depth / sm_flops_per_s;
}

double split_k_factor(double tiles, double depth, const GpuMachine& machine) {
  if (!(tiles >= 1) || !(depth >= 1)) throw std::invalid_argument("split_k_factor: tiles and depth must be at least 1");
  const double sms = static_cast<double>(machine.sm_count);
  if (tiles >= sms) return 1.0;
  return std::max(1.0, std::min(std::floor(sms / tiles), std::floor(depth / static_cast<double>(machine.gemm.split_k_min_depth))));
}

HostSide model_matmul(const Op& op, const GpuMachine& m, GpuPrediction& p) {
  const double rows = static_cast<double>(op.shape.num_inputs), depth = static_cast<double>(op.shape.num_features),
               cols = static_cast<double>(op.shape.out_features);
  const bool bias = op.bias >= 0;
  const double value_bytes = static_cast<double>(dtype_bytes(op.dtype));
  // F.linear(x, W, b) is addmm(b, x, W^T): for a 1-D contiguous bias ATen takes cuBLASLt with the bias
  // as the GEMM's epilogue (addmm_out_cuda_impl, CUDA >= 11.4), so one kernel either way.
  // A backward pass's products (autograd's mm of addmm: g @ W for the input, x^T @ g for the weight)
  // are the same model: ATen hands a transposed view to cuBLAS as the operand's transpose flag, with no
  // copy (prepare_matrix_for_cublas), and cuBLAS has kernels for each operand layout, so FLOPs, bytes and
  // the output's tiles are those of the plain product. Measured once on an H100 (PyTorch 2.11, fp32)
  // the layouts of one shape differ by up to about 25% either way at small sizes with no consistent
  // sign, and by 3% at 4096^3. Weight gradients have a long inner dimension and a small output: the
  // case split-K (below) is for.
  p.call = op.transpose_input    ? "torch.mm (x^T @ grad: autograd's weight gradient)"
           : op.transpose_weight ? "torch.mm (grad @ W^T: autograd's input gradient)"
                                 : "torch.nn.functional.linear";
  p.flops = op.flops();
  // cuBLAS picks a smaller kernel when the matrix is smaller than its large tile.
  const double tile_rows = std::min(static_cast<double>(m.gemm.cublas_tile_rows), rows);
  const double tile_cols = std::min(static_cast<double>(m.gemm.cublas_tile_cols), cols);
  const double tiles = std::ceil(rows / tile_rows) * std::ceil(cols / tile_cols);
  const double splits = split_k_factor(tiles, depth, m);
  const double output_bytes = rows * cols * value_bytes;
  // Each split writes its own partial output; the reduction reads them all and writes the output.
  const double traffic = (rows * depth + depth * cols + (bias ? cols : 0.0)) * value_bytes + splits * output_bytes;
  p.footprint_bytes = traffic;
  p.l2_hit_fraction = l2_hit_fraction(p.footprint_bytes, static_cast<double>(m.l2_bytes));
  KernelList ks(m, p.l2_hit_fraction);
  ks.add(bias ? "gemm_bias" : "gemm", traffic,
         {{"compute", gemm_compute_s(tiles * splits, tile_rows, tile_cols, depth / splits, op.dtype, m)}});
  if (splits > 1) ks.add("splitk_reduce", (splits + 1.0) * output_bytes, {});
  ks.finish(p);
  return {m.eager.aten_call_s, true};
}

namespace {

// segment_matmul's weight gradient as pyg_lib's autograd (csrc/ops/autograd/matmul_kernel.cpp) computes
// it: size_from_ptr(ptr).cpu() (a kernel, then a copy the host waits for), input^T and grad split into
// views, one torch::matmul per segment (a cuBLAS GEMM [K, M_s] @ [M_s, N] with the input transposed),
// and at::stack of the products (one copy kernel). Rows are taken as evenly spread over the segments.
HostSide model_segment_weight_grad(const Op& op, const GpuMachine& m, GpuPrediction& p) {
  const double rows = static_cast<double>(op.shape.num_inputs), depth = static_cast<double>(op.shape.num_features),
               cols = static_cast<double>(op.shape.out_features), segments = static_cast<double>(op.shape.num_segments);
  const double value_bytes = static_cast<double>(dtype_bytes(op.dtype));
  const double index_bytes = static_cast<double>(m.index_bytes);
  p.call = "pyg_lib segment_matmul backward (x_s^T @ grad_s per segment, torch.stack)";
  p.flops = op.flops();
  const double filled = std::min(segments, rows);
  const double seg_rows = std::max(1.0, rows / filled);
  const double output_bytes = segments * depth * cols * value_bytes;
  p.footprint_bytes = (rows * depth + rows * cols) * value_bytes + 2.0 * output_bytes + (segments + 1.0) * index_bytes;
  p.l2_hit_fraction = l2_hit_fraction(p.footprint_bytes, static_cast<double>(m.l2_bytes));
  KernelList ks(m, p.l2_hit_fraction);
  ks.add("size_from_ptr", (2.0 * segments + 1.0) * index_bytes, {});
  ks.add("sizes_to_host", 0.0, {{"pcie", segments * index_bytes / m.pcie_bytes_per_s}});
  const double tile_rows = std::min(static_cast<double>(m.gemm.cublas_tile_rows), depth);
  const double tile_cols = std::min(static_cast<double>(m.gemm.cublas_tile_cols), cols);
  const double tiles = std::ceil(depth / tile_rows) * std::ceil(cols / tile_cols);
  const double splits = split_k_factor(tiles, seg_rows, m);
  const double gemm_output_bytes = depth * cols * value_bytes;
  const double gemm_traffic = (seg_rows * depth + seg_rows * cols) * value_bytes + splits * gemm_output_bytes;
  const double gemm_compute = gemm_compute_s(tiles * splits, tile_rows, tile_cols, seg_rows / splits, op.dtype, m);
  for (std::int64_t s = 0; s < static_cast<std::int64_t>(filled); ++s) {
    ks.add("gemm", gemm_traffic, {{"compute", gemm_compute}});
    if (splits > 1) ks.add("splitk_reduce", (splits + 1.0) * gemm_output_bytes, {});
  }
  // An empty segment's [K, 0] @ [0, N] product is a zero fill, no GEMM.
  for (std::int64_t s = static_cast<std::int64_t>(filled); s < op.shape.num_segments; ++s) ks.add("fill", gemm_output_bytes, {});
  ks.add("stack", 2.0 * output_bytes, {});
  ks.finish(p);
  // The sizes' copy waits for the GPU, so the host's calls (one matmul per segment, the split views,
  // the stack) add to the kernels instead of hiding behind them.
  return {m.eager.segment_matmul_call_s + (segments + 1.0) * m.eager.aten_call_s, false};
}

}  // namespace

HostSide model_segment_matmul(const Op& op, const GpuMachine& m, GpuPrediction& p) {
  if (op.transpose_input) return model_segment_weight_grad(op, m, p);
  const double rows = static_cast<double>(op.shape.num_inputs), depth = static_cast<double>(op.shape.num_features),
               cols = static_cast<double>(op.shape.out_features), segments = static_cast<double>(op.shape.num_segments);
  const double value_bytes = static_cast<double>(dtype_bytes(op.dtype));
  const double index_bytes = static_cast<double>(m.index_bytes);
  // The input's gradient is pyg_lib's segment_matmul(grad, ptr, W.transpose(-2, -1)): the same call and
  // grouped GEMM, its weight operand a transposed view (taken to cost what the plain layout does, as
  // for cuBLAS's transposed operands in model_matmul).
  p.call = op.transpose_weight ? "pyg_lib.ops.segment_matmul (grad @ W^T: autograd's input gradient)" : "pyg_lib.ops.segment_matmul";
  p.flops = op.flops();
  const double operand_bytes = (rows * depth + segments * depth * cols + rows * cols) * value_bytes;
  // pyg-lib's argument block: leading dimensions and pointers of A, B, C (6 int64) and a GemmCoord
  // (3 int32) per segment (pyg_lib/csrc/ops/cuda/matmul_kernel.cu).
  const double argument_bytes = segments * (6.0 * 8.0 + 3.0 * 4.0);
  p.footprint_bytes = operand_bytes + (segments + 1.0) * index_bytes + argument_bytes;
  p.l2_hit_fraction = l2_hit_fraction(p.footprint_bytes, static_cast<double>(m.l2_bytes));
  // The op graph gives segment counts, not sizes: the rows are taken as evenly spread over the
  // segments that can be non-empty. Each segment is its own GEMM problem, so its last tile is partly
  // empty; the grouped kernel has one compiled tile (no shrinking for small segments).
  const double filled = std::min(segments, rows);
  const double tile_rows = static_cast<double>(m.gemm.grouped_tile_rows), tile_cols = static_cast<double>(m.gemm.grouped_tile_cols);
  const double tiles = filled * std::ceil(rows / filled / tile_rows) * std::ceil(cols / tile_cols);
  KernelList ks(m, p.l2_hit_fraction);
  ks.add("size_from_ptr", (2.0 * segments + 1.0) * index_bytes, {});
  ks.add("sizes_to_host", 0.0, {{"pcie", segments * index_bytes / m.pcie_bytes_per_s}});
  ks.add("gemm_args_to_device", 0.0, {{"pcie", argument_bytes / m.pcie_bytes_per_s}});
  ks.add("grouped_gemm", operand_bytes + argument_bytes, {{"compute", gemm_compute_s(tiles, tile_rows, tile_cols, depth, op.dtype, m)}});
  ks.finish(p);
  // The sizes' copy to the host waits for the GPU, so the host's per-call and per-segment work
  // (views, argument rows, the CUTLASS launch) adds to the kernels instead of hiding behind them.
  return {m.eager.segment_matmul_call_s + segments * m.eager.segment_matmul_per_segment_s, false};
}

}  // namespace tilesim::gpu
