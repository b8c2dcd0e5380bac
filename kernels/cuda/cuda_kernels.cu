// The CUDA kernels: thin __global__ wrappers around kernel_bodies.hpp's per-thread bodies, and their
// launchers. Built only when CMake finds nvcc.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_launch.hpp"
#include "kernels/cuda/kernel_bodies.hpp"
#include "kernels/cuda/training_bodies.hpp"

namespace tilesim::kernels::cuda {
namespace {

__device__ ThreadIndex this_thread() {
  return ThreadIndex{static_cast<std::int64_t>(blockIdx.x), static_cast<std::int64_t>(blockDim.x), static_cast<std::int64_t>(threadIdx.x),
                     static_cast<std::int64_t>(gridDim.x)};
}

__global__ void fill_kernel(float* out, std::int64_t count, float value) { fill_body(this_thread(), out, count, value); }
__global__ void fill_int_kernel(std::int32_t* out, std::int64_t count, std::int32_t value) { fill_body(this_thread(), out, count, value); }
__global__ void gather_kernel(const float* table, std::int64_t f, const std::int32_t* idx, std::int64_t n, float* out) {
  gather_body(this_thread(), table, f, idx, n, out);
}
__global__ void gather_vec4_kernel(const float* table, std::int64_t f, const std::int32_t* idx, std::int64_t n, float* out) {
  gather_vec4_body(this_thread(), table, f, idx, n, out);
}
__global__ void scatter_kernel(ScatterOp op, const float* src, std::int64_t m, std::int64_t f, const std::int32_t* idx, float* out,
                               std::int32_t* counts) {
  scatter_atomic_body(this_thread(), op, src, m, f, idx, out, counts);
}
__global__ void finish_kernel(bool mean, const std::int32_t* counts, std::int64_t n, std::int64_t f, float* out) {
  finish_body(this_thread(), mean, counts, n, f, out);
}
__global__ void segment_kernel(int op, const float* src, std::int64_t f, const std::int64_t* offsets, std::int64_t n, float* out) {
  segment_body(this_thread(), op, src, f, offsets, n, out);
}
__global__ void spmm_atomic_kernel(const float* x, std::int64_t f, const std::int32_t* src, const std::int32_t* dst, const float* w,
                                   std::int64_t e, float* out) {
  spmm_atomic_body(this_thread(), x, f, src, dst, w, e, out);
}
__global__ void spmm_csr_kernel(const float* x, std::int64_t f, const std::int64_t* offsets, const std::int32_t* src, const float* w,
                                std::int64_t n, float* out) {
  spmm_csr_body(this_thread(), x, f, offsets, src, w, n, out);
}
__global__ void degree_kernel(const std::int32_t* idx, std::int64_t n, float* out) { degree_body(this_thread(), idx, n, out); }
__global__ void unary_kernel(UnaryFn fn, float scalar, const float* in, std::int64_t n, float* out) {
  unary_body(this_thread(), fn, scalar, in, n, out);
}
__global__ void binary_kernel(BinaryFn fn, const float* in, std::int64_t rows, std::int64_t f, const float* other, std::int64_t other_rows,
                              std::int64_t groups, float* out) {
  binary_body(this_thread(), fn, in, rows, f, other, other_rows, groups, out);
}
__global__ void segment_matmul_kernel(const float* in, std::int64_t rows, std::int64_t depth, const std::int32_t* offsets,
                                      std::int64_t segments, const float* weight, std::int64_t cols, float* out) {
  segment_matmul_body(this_thread(), in, rows, depth, offsets, segments, weight, cols, out);
}
__global__ void segment_matmul_transposed_weight_kernel(const float* in, std::int64_t rows, std::int64_t depth, const std::int32_t* offsets,
                                                        std::int64_t segments, const float* weight, std::int64_t cols, float* out) {
  segment_matmul_transposed_weight_body(this_thread(), in, rows, depth, offsets, segments, weight, cols, out);
}
__global__ void segment_matmul_transposed_input_kernel(const float* in, std::int64_t depth, const std::int32_t* offsets,
                                                       std::int64_t segments, const float* g, std::int64_t cols, float* out) {
  segment_matmul_transposed_input_body(this_thread(), in, depth, offsets, segments, g, cols, out);
}
__global__ void unary_grad_kernel(UnaryFn fn, float scalar, const float* x, const float* g, std::int64_t n, float* out) {
  unary_grad_body(this_thread(), fn, scalar, x, g, n, out);
}
__global__ void sum_to_kernel(const float* x, std::int64_t rows, std::int64_t f, std::int64_t other_rows, std::int64_t groups, float* out) {
  sum_to_body(this_thread(), x, rows, f, other_rows, groups, out);
}
__global__ void column_partials_kernel(const float* x, std::int64_t rows, std::int64_t f, std::int64_t chunk_rows, float* partial) {
  column_partials_body(this_thread(), x, rows, f, chunk_rows, partial);
}
__global__ void loss_rows_kernel(LossFn fn, const float* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels,
                                 const float* targets, const float* row_weights, float* row_loss) {
  loss_rows_body(this_thread(), fn, x, rows, cols, labels, targets, row_loss, row_weights);
}
__global__ void loss_mean_kernel(const float* row_loss, std::int64_t rows, float count, float* out) {
  loss_mean_body(this_thread(), row_loss, rows, count, out);
}
__global__ void weight_sum_kernel(const float* row_weights, std::int64_t rows, float* weight_sum) {
  weight_sum_body(this_thread(), row_weights, rows, weight_sum);
}
__global__ void weighted_loss_mean_kernel(const float* row_loss, std::int64_t rows, float cols_per_term, const float* weight_sum,
                                          float* out) {
  weighted_loss_mean_body(this_thread(), row_loss, rows, cols_per_term, weight_sum, out);
}
__global__ void loss_grad_kernel(LossFn fn, const float* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels,
                                 const float* targets, const float* row_weights, const float* weight_sum, float* out) {
  loss_grad_body(this_thread(), fn, x, rows, cols, labels, targets, out, row_weights, weight_sum);
}
__global__ void optimizer_step_kernel(OptimizerScalars s, const float* p, const float* g, const float* state, std::int64_t n, float* out) {
  optimizer_step_body(this_thread(), s, p, g, state, n, out);
}
__global__ void bias_rows_kernel(const float* bias, std::int64_t m, std::int64_t n, float* c) {
  const ThreadIndex t = this_thread();
  for (std::int64_t e = t.global(); e < m * n; e += t.stride()) c[e] = bias[e % n];
}

void check(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA kernel ") + kernel + ": " + cudaGetErrorString(e));
}

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

template <class Kernel, class... Args>
void launch(const char* name, std::int64_t items, void* stream, Kernel kernel, Args... args) {
  const LaunchShape s = launch_shape(items);
  kernel<<<static_cast<unsigned>(s.blocks), static_cast<unsigned>(s.threads_per_block), 0, as_stream(stream)>>>(args...);
  check(name);
}

}  // namespace

void launch_gather(const float* table, std::int64_t num_features, const std::int32_t* indices, std::int64_t num_lookups, float* out,
                   void* stream) {
  if (num_features % 4 == 0)
    launch("gather_vec4", num_lookups * num_features / 4, stream, gather_vec4_kernel, table, num_features, indices, num_lookups, out);
  else
    launch("gather", num_lookups * num_features, stream, gather_kernel, table, num_features, indices, num_lookups, out);
}

void launch_scatter(DeviceReduce reduce, const float* src, std::int64_t num_messages, std::int64_t num_features,
                    const std::int32_t* indices, std::int64_t num_outputs, float* out, std::int32_t* counts, void* stream) {
  const std::int64_t out_items = num_outputs * num_features;
  const bool counted = reduce != DeviceReduce::sum;
  launch("fill", out_items, stream, fill_kernel, out, out_items, reduce == DeviceReduce::max ? -INFINITY : 0.0f);
  if (counted) launch("fill_counts", num_outputs, stream, fill_int_kernel, counts, num_outputs, 0);
  launch("scatter", num_messages * num_features, stream, scatter_kernel, reduce == DeviceReduce::max ? ScatterOp::max : ScatterOp::add,
         src, num_messages, num_features, indices, out, counted ? counts : static_cast<std::int32_t*>(nullptr));
  if (counted) launch("finish", out_items, stream, finish_kernel, reduce == DeviceReduce::mean, static_cast<const std::int32_t*>(counts),
                      num_outputs, num_features, out);
}

void launch_segment(DeviceReduce reduce, const float* src, std::int64_t num_features, const std::int64_t* offsets,
                    std::int64_t num_segments, float* out, void* stream) {
  launch("segment", num_segments * num_features, stream, segment_kernel, static_cast<int>(reduce), src, num_features, offsets,
         num_segments, out);
}

void launch_spmm_atomic(const float* x, std::int64_t num_features, const std::int32_t* src_nodes, const std::int32_t* dst_nodes,
                        const float* weights, std::int64_t num_edges, std::int64_t num_outputs, float* out, void* stream) {
  launch("fill", num_outputs * num_features, stream, fill_kernel, out, num_outputs * num_features, 0.0f);
  launch("spmm_atomic", num_edges * num_features, stream, spmm_atomic_kernel, x, num_features, src_nodes, dst_nodes, weights, num_edges, out);
}

void launch_spmm_csr(const float* x, std::int64_t num_features, const std::int64_t* offsets, const std::int32_t* src_nodes,
                     const float* weights, std::int64_t num_outputs, float* out, void* stream) {
  launch("spmm_csr", num_outputs * num_features, stream, spmm_csr_kernel, x, num_features, offsets, src_nodes, weights, num_outputs, out);
}

void launch_matmul(const float* a, const float* b, std::int64_t m, std::int64_t k, std::int64_t n, const float* bias, float* c,
                   void* stream) {
  // One handle per host thread, created on first use (cuBLAS handles are not thread-safe to share).
  thread_local cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cuBLAS: cublasCreate failed");
    return h;
  }();
  cublasSetStream(handle, as_stream(stream));
  float beta = 0.0f;
  if (bias != nullptr) {
    launch("bias_rows", m * n, stream, bias_rows_kernel, bias, m, n, c);
    beta = 1.0f;
  }
  const float alpha = 1.0f;
  // Row-major C = A B is column-major C^T = B^T A^T: swap the operands instead of transposing.
  const cublasStatus_t status = cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
                                            &alpha, b, static_cast<int>(n), a, static_cast<int>(k), &beta, c, static_cast<int>(n));
  if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cuBLAS: cublasSgemm failed with status " + std::to_string(status));
}

void launch_matmul_transposed(const float* a, bool a_transposed, const float* b, bool b_transposed, std::int64_t m, std::int64_t k,
                              std::int64_t n, float* c, void* stream) {
  thread_local cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cuBLAS: cublasCreate failed");
    return h;
  }();
  cublasSetStream(handle, as_stream(stream));
  const float alpha = 1.0f, beta = 0.0f;
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T. A row-major [r x c] array is a
  // column-major [c x r] one with leading dimension c, so a stored-transposed operand is read with
  // CUBLAS_OP_T and the leading dimension of its stored rows.
  const cublasStatus_t status =
      cublasSgemm(handle, b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                  static_cast<int>(m), static_cast<int>(k), &alpha, b, static_cast<int>(b_transposed ? k : n), a,
                  static_cast<int>(a_transposed ? m : k), &beta, c, static_cast<int>(n));
  if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cuBLAS: cublasSgemm failed with status " + std::to_string(status));
}

void launch_segment_matmul_transposed_weight(const float* in, std::int64_t rows, std::int64_t depth, const std::int32_t* offsets,
                                             std::int64_t segments, const float* weight, std::int64_t cols, float* out, void* stream) {
  launch("segment_matmul_transposed_weight", rows * cols, stream, segment_matmul_transposed_weight_kernel, in, rows, depth, offsets, segments,
         weight, cols, out);
}

void launch_segment_matmul_transposed_input(const float* in, std::int64_t depth, const std::int32_t* offsets, std::int64_t segments,
                                            const float* g, std::int64_t cols, float* out, void* stream) {
  launch("segment_matmul_transposed_input", segments * depth * cols, stream, segment_matmul_transposed_input_kernel, in, depth, offsets,
         segments, g, cols, out);
}

void launch_unary_grad(UnaryFn fn, float scalar, const float* x, const float* g, std::int64_t count, float* out, void* stream) {
  launch("unary_grad", count, stream, unary_grad_kernel, fn, scalar, x, g, count, out);
}

void launch_sum_to(const float* x, std::int64_t rows, std::int64_t features, std::int64_t other_rows, std::int64_t groups, float* partial,
                   float* out, void* stream) {
  if (other_rows == 1 && rows > kSumToChunkRows) {
    const std::int64_t chunks = sum_to_chunks(rows);
    launch("column_partials", chunks * features, stream, column_partials_kernel, x, rows, features, kSumToChunkRows, partial);
    launch("sum_to", groups, stream, sum_to_kernel, static_cast<const float*>(partial), chunks, features, std::int64_t{1}, groups, out);
    return;
  }
  launch("sum_to", other_rows * groups, stream, sum_to_kernel, x, rows, features, other_rows, groups, out);
}

void launch_loss(LossFn fn, const float* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels, const float* targets,
                 const float* row_weights, float* row_loss, float* weight_sum, float* out, void* stream) {
  launch("loss_rows", rows, stream, loss_rows_kernel, fn, x, rows, cols, labels, targets, row_weights, row_loss);
  if (row_weights != nullptr) {
    launch("weight_sum", 1, stream, weight_sum_kernel, row_weights, rows, weight_sum);
    const float cols_per_term = static_cast<float>(fn == LossFn::cross_entropy ? 1 : cols);
    launch("weighted_loss_mean", 1, stream, weighted_loss_mean_kernel, static_cast<const float*>(row_loss), rows, cols_per_term,
           static_cast<const float*>(weight_sum), out);
    return;
  }
  const float count = static_cast<float>(fn == LossFn::cross_entropy ? rows : rows * cols);
  launch("loss_mean", 1, stream, loss_mean_kernel, static_cast<const float*>(row_loss), rows, count, out);
}

void launch_loss_grad(LossFn fn, const float* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels, const float* targets,
                      const float* row_weights, float* weight_sum, float* out, void* stream) {
  if (row_weights != nullptr) launch("weight_sum", 1, stream, weight_sum_kernel, row_weights, rows, weight_sum);
  launch("loss_grad", rows, stream, loss_grad_kernel, fn, x, rows, cols, labels, targets, row_weights,
         static_cast<const float*>(weight_sum), out);
}

void launch_optimizer_step(const OptimizerSpec& spec, double step, const float* param, const float* grad, const float* state,
                           std::int64_t count, float* out, void* stream) {
  launch("optimizer_step", count, stream, optimizer_step_kernel, optimizer_scalars(spec, step), param, grad, state, count, out);
}

void launch_degree(const std::int32_t* indices, std::int64_t num_indices, std::int64_t num_outputs, float* out, void* stream) {
  launch("fill", num_outputs, stream, fill_kernel, out, num_outputs, 0.0f);
  launch("degree", num_indices, stream, degree_kernel, indices, num_indices, out);
}

void launch_unary(UnaryFn fn, float scalar, const float* in, std::int64_t count, float* out, void* stream) {
  launch("unary", count, stream, unary_kernel, fn, scalar, in, count, out);
}

void launch_binary(BinaryFn fn, const float* in, std::int64_t rows, std::int64_t features, const float* other, std::int64_t other_rows,
                   std::int64_t groups, float* out, void* stream) {
  launch("binary", rows * features, stream, binary_kernel, fn, in, rows, features, other, other_rows, groups, out);
}

void launch_segment_matmul(const float* in, std::int64_t rows, std::int64_t depth, const std::int32_t* offsets, std::int64_t segments,
                           const float* weight, std::int64_t cols, float* out, void* stream) {
  launch("segment_matmul", rows * cols, stream, segment_matmul_kernel, in, rows, depth, offsets, segments, weight, cols, out);
}

}  // namespace tilesim::kernels::cuda
