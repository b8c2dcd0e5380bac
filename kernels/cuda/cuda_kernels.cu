// The CUDA kernels: thin __global__ wrappers around kernel_bodies.hpp's per-thread bodies, and their
// launchers. Built only when CMake finds nvcc. The kernels of the op kinds are templates on the
// values' storage (value_storage.hpp); the launchers are instantiated at the end of this file for
// float32, float16 and bfloat16, the float32 ones making the same kernels and cuBLAS calls as before
// half types came.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "kernels/cuda/cublas_entry_points.hpp"
#include "kernels/cuda/cuda_launch.hpp"
#include "kernels/cuda/kernel_bodies.hpp"
#include "kernels/cuda/training_bodies.hpp"

namespace tilesim::kernels::cuda {
namespace {

__device__ ThreadIndex this_thread() {
  return ThreadIndex{static_cast<std::int64_t>(blockIdx.x), static_cast<std::int64_t>(blockDim.x), static_cast<std::int64_t>(threadIdx.x),
                     static_cast<std::int64_t>(gridDim.x)};
}

// A value of storage S ("float" in the launchers' comments).
template <class S>
using V = typename S::type;

template <class S>
__global__ void fill_kernel(V<S>* out, std::int64_t count, float value) { fill_body<S>(this_thread(), out, count, value); }
__global__ void fill_int_kernel(std::int32_t* out, std::int64_t count, std::int32_t value) { fill_body(this_thread(), out, count, value); }
template <class S>
__global__ void gather_kernel(const V<S>* table, std::int64_t f, const std::int32_t* idx, std::int64_t n, V<S>* out) {
  gather_body<S>(this_thread(), table, f, idx, n, out);
}
template <class S>
__global__ void gather_vector_kernel(const V<S>* table, std::int64_t f, const std::int32_t* idx, std::int64_t n, V<S>* out) {
  gather_vector_body<S>(this_thread(), table, f, idx, n, out);
}
template <class S>
__global__ void scatter_kernel(ScatterOp op, const V<S>* src, std::int64_t m, std::int64_t f, const std::int32_t* idx, V<S>* out,
                               std::int32_t* counts) {
  scatter_atomic_body<S>(this_thread(), op, src, m, f, idx, out, counts);
}
template <class S>
__global__ void finish_kernel(bool mean, const std::int32_t* counts, std::int64_t n, std::int64_t f, V<S>* out) {
  finish_body<S>(this_thread(), mean, counts, n, f, out);
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
template <class S>
__global__ void degree_kernel(const std::int32_t* idx, std::int64_t n, V<S>* out) { degree_body<S>(this_thread(), idx, n, out); }
template <class S>
__global__ void unary_kernel(UnaryFn fn, float scalar, const V<S>* in, std::int64_t n, V<S>* out) {
  unary_body<S>(this_thread(), fn, scalar, in, n, out);
}
template <class In, class Out>
__global__ void cast_kernel(const V<In>* in, float scale, std::int64_t n, V<Out>* out) { cast_body<In, Out>(this_thread(), in, scale, n, out); }
template <class S>
__global__ void binary_kernel(BinaryFn fn, const V<S>* in, std::int64_t rows, std::int64_t f, const V<S>* other, std::int64_t other_rows,
                              std::int64_t groups, V<S>* out) {
  binary_body<S>(this_thread(), fn, in, rows, f, other, other_rows, groups, out);
}
template <class S>
__global__ void segment_matmul_kernel(const V<S>* in, std::int64_t rows, std::int64_t depth, const std::int32_t* offsets,
                                      std::int64_t segments, const V<S>* weight, std::int64_t cols, V<S>* out) {
  segment_matmul_body<S>(this_thread(), in, rows, depth, offsets, segments, weight, cols, out);
}
template <class S>
__global__ void segment_matmul_transposed_weight_kernel(const V<S>* in, std::int64_t rows, std::int64_t depth, const std::int32_t* offsets,
                                                        std::int64_t segments, const V<S>* weight, std::int64_t cols, V<S>* out) {
  segment_matmul_transposed_weight_body<S>(this_thread(), in, rows, depth, offsets, segments, weight, cols, out);
}
template <class S>
__global__ void segment_matmul_transposed_input_kernel(const V<S>* in, std::int64_t depth, const std::int32_t* offsets,
                                                       std::int64_t segments, const V<S>* g, std::int64_t cols, V<S>* out) {
  segment_matmul_transposed_input_body<S>(this_thread(), in, depth, offsets, segments, g, cols, out);
}
template <class S>
__global__ void unary_grad_kernel(UnaryFn fn, float scalar, const V<S>* x, const V<S>* g, std::int64_t n, V<S>* out) {
  unary_grad_body<S>(this_thread(), fn, scalar, x, g, n, out);
}
template <class In, class Out>
__global__ void sum_to_kernel(const V<In>* x, std::int64_t rows, std::int64_t f, std::int64_t other_rows, std::int64_t groups, V<Out>* out) {
  sum_to_body<In, Out>(this_thread(), x, rows, f, other_rows, groups, out);
}
template <class S>
__global__ void column_partials_kernel(const V<S>* x, std::int64_t rows, std::int64_t f, std::int64_t chunk_rows, float* partial) {
  column_partials_body<S>(this_thread(), x, rows, f, chunk_rows, partial);
}
template <class S>
__global__ void loss_rows_kernel(LossFn fn, const V<S>* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels,
                                 const V<S>* targets, const float* row_weights, float* row_loss) {
  loss_rows_body<S>(this_thread(), fn, x, rows, cols, labels, targets, row_loss, row_weights);
}
template <class S>
__global__ void loss_mean_kernel(const float* row_loss, std::int64_t rows, float count, V<S>* out) {
  loss_mean_body<S>(this_thread(), row_loss, rows, count, out);
}
__global__ void weight_sum_kernel(const float* row_weights, std::int64_t rows, float* weight_sum) {
  weight_sum_body(this_thread(), row_weights, rows, weight_sum);
}
template <class S>
__global__ void weighted_loss_mean_kernel(const float* row_loss, std::int64_t rows, float cols_per_term, const float* weight_sum,
                                          V<S>* out) {
  weighted_loss_mean_body<S>(this_thread(), row_loss, rows, cols_per_term, weight_sum, out);
}
template <class S>
__global__ void loss_grad_kernel(LossFn fn, const V<S>* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels,
                                 const V<S>* targets, const float* row_weights, const float* weight_sum, V<S>* out) {
  loss_grad_body<S>(this_thread(), fn, x, rows, cols, labels, targets, out, row_weights, weight_sum);
}
template <class S>
__global__ void optimizer_step_kernel(OptimizerScalars s, const V<S>* p, const V<S>* g, const V<S>* state, std::int64_t n, V<S>* out) {
  optimizer_step_body<S>(this_thread(), s, p, g, state, n, out);
}
// A copy of the bias into every row of c (values of the dtype: no conversion), for cuBLAS's beta = 1.
template <class S>
__global__ void bias_rows_kernel(const V<S>* bias, std::int64_t m, std::int64_t n, V<S>* c) {
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

// One cuBLAS handle per host thread, created on first use (cuBLAS handles are not thread-safe to share).
cublasHandle_t cublas_handle(void* stream) {
  thread_local cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    if (cublas_library().create(&h) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cuBLAS: cublasCreate failed");
    return h;
  }();
  cublas_library().set_stream(handle, as_stream(stream));
  return handle;
}

void check_gemm(cublasStatus_t status, const char* routine) {
  if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string("cuBLAS: ") + routine + " failed with status " + std::to_string(status));
}

// cuBLAS's name of a 16-bit storage's type.
cudaDataType_t cuda_data_type(Float16Storage) { return CUDA_R_16F; }
cudaDataType_t cuda_data_type(BFloat16Storage) { return CUDA_R_16BF; }

// Row-major C [m, n] = op(A) op(B) + beta C, with op(X) = X or, for an operand stored transposed, X^T.
// cuBLAS is column-major: row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and a
// row-major [r x c] array is a column-major [c x r] one with leading dimension c, so the operands swap
// places, and a stored-transposed one is read with CUBLAS_OP_T and the leading dimension of its stored
// rows. float32: SGEMM in cuBLAS's default math mode (no TF32).
void gemm(Float32Storage, const float* a, bool a_transposed, const float* b, bool b_transposed, std::int64_t m, std::int64_t k,
          std::int64_t n, float beta, float* c, void* stream) {
  cublasHandle_t handle = cublas_handle(stream);
  cublas_library().set_math_mode(handle, CUBLAS_DEFAULT_MATH);
  const float alpha = 1.0f;
  check_gemm(cublas_library().sgemm(handle, b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                         static_cast<int>(m), static_cast<int>(k), &alpha, b, static_cast<int>(b_transposed ? k : n), a,
                         static_cast<int>(a_transposed ? m : k), &beta, c, static_cast<int>(n)),
             "cublasSgemm");
}
// A half dtype: half A, B and C, float32 compute (alpha, beta, the accumulation and C's read), the result
// rounded to the dtype once. Split-K reductions in the output's precision are disallowed: PyTorch
// allows them by default, but they would add half roundings the float32 accumulation does not have.
template <class S>
void gemm(S, const std::uint16_t* a, bool a_transposed, const std::uint16_t* b, bool b_transposed, std::int64_t m, std::int64_t k,
          std::int64_t n, float beta, std::uint16_t* c, void* stream) {
  cublasHandle_t handle = cublas_handle(stream);
  cublas_library().set_math_mode(handle, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
  const float alpha = 1.0f;
  const cudaDataType_t type = cuda_data_type(S{});
  check_gemm(cublas_library().gemm_ex(handle, b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                          static_cast<int>(m), static_cast<int>(k), &alpha, b, type, static_cast<int>(b_transposed ? k : n), a, type,
                          static_cast<int>(a_transposed ? m : k), &beta, c, type, static_cast<int>(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
             "cublasGemmEx");
}

}  // namespace

template <class S>
void launch_gather(const V<S>* table, std::int64_t num_features, const std::int32_t* indices, std::int64_t num_lookups, V<S>* out,
                   void* stream) {
  const std::int64_t per_vector = gather_vector_elements<S>();
  if (num_features % per_vector == 0)
    launch("gather_vector", num_lookups * num_features / per_vector, stream, gather_vector_kernel<S>, table, num_features, indices,
           num_lookups, out);
  else
    launch("gather", num_lookups * num_features, stream, gather_kernel<S>, table, num_features, indices, num_lookups, out);
}

template <class S>
void launch_scatter(DeviceReduce reduce, const V<S>* src, std::int64_t num_messages, std::int64_t num_features, const std::int32_t* indices,
                    std::int64_t num_outputs, V<S>* out, std::int32_t* counts, void* stream) {
  const std::int64_t out_items = num_outputs * num_features;
  const bool counted = reduce != DeviceReduce::sum;
  launch("fill", out_items, stream, fill_kernel<S>, out, out_items, reduce == DeviceReduce::max ? -INFINITY : 0.0f);
  if (counted) launch("fill_counts", num_outputs, stream, fill_int_kernel, counts, num_outputs, 0);
  launch("scatter", num_messages * num_features, stream, scatter_kernel<S>, reduce == DeviceReduce::max ? ScatterOp::max : ScatterOp::add,
         src, num_messages, num_features, indices, out, counted ? counts : static_cast<std::int32_t*>(nullptr));
  if (counted) launch("finish", out_items, stream, finish_kernel<S>, reduce == DeviceReduce::mean, static_cast<const std::int32_t*>(counts),
                      num_outputs, num_features, out);
}

void launch_segment(DeviceReduce reduce, const float* src, std::int64_t num_features, const std::int64_t* offsets,
                    std::int64_t num_segments, float* out, void* stream) {
  launch("segment", num_segments * num_features, stream, segment_kernel, static_cast<int>(reduce), src, num_features, offsets,
         num_segments, out);
}

void launch_spmm_atomic(const float* x, std::int64_t num_features, const std::int32_t* src_nodes, const std::int32_t* dst_nodes,
                        const float* weights, std::int64_t num_edges, std::int64_t num_outputs, float* out, void* stream) {
  launch("fill", num_outputs * num_features, stream, fill_kernel<Float32Storage>, out, num_outputs * num_features, 0.0f);
  launch("spmm_atomic", num_edges * num_features, stream, spmm_atomic_kernel, x, num_features, src_nodes, dst_nodes, weights, num_edges, out);
}

void launch_spmm_csr(const float* x, std::int64_t num_features, const std::int64_t* offsets, const std::int32_t* src_nodes,
                     const float* weights, std::int64_t num_outputs, float* out, void* stream) {
  launch("spmm_csr", num_outputs * num_features, stream, spmm_csr_kernel, x, num_features, offsets, src_nodes, weights, num_outputs, out);
}

template <class S>
void launch_matmul(const V<S>* a, const V<S>* b, std::int64_t m, std::int64_t k, std::int64_t n, const V<S>* bias, V<S>* c, void* stream) {
  float beta = 0.0f;
  if (bias != nullptr) {
    launch("bias_rows", m * n, stream, bias_rows_kernel<S>, bias, m, n, c);
    beta = 1.0f;
  }
  gemm(S{}, a, false, b, false, m, k, n, beta, c, stream);
}

template <class S>
void launch_matmul_transposed(const V<S>* a, bool a_transposed, const V<S>* b, bool b_transposed, std::int64_t m, std::int64_t k,
                              std::int64_t n, V<S>* c, void* stream) {
  gemm(S{}, a, a_transposed, b, b_transposed, m, k, n, 0.0f, c, stream);
}

template <class S>
void launch_segment_matmul_transposed_weight(const V<S>* in, std::int64_t rows, std::int64_t depth, const std::int32_t* offsets,
                                             std::int64_t segments, const V<S>* weight, std::int64_t cols, V<S>* out, void* stream) {
  launch("segment_matmul_transposed_weight", rows * cols, stream, segment_matmul_transposed_weight_kernel<S>, in, rows, depth, offsets,
         segments, weight, cols, out);
}

template <class S>
void launch_segment_matmul_transposed_input(const V<S>* in, std::int64_t depth, const std::int32_t* offsets, std::int64_t segments,
                                            const V<S>* g, std::int64_t cols, V<S>* out, void* stream) {
  launch("segment_matmul_transposed_input", segments * depth * cols, stream, segment_matmul_transposed_input_kernel<S>, in, depth, offsets,
         segments, g, cols, out);
}

template <class S>
void launch_unary_grad(UnaryFn fn, float scalar, const V<S>* x, const V<S>* g, std::int64_t count, V<S>* out, void* stream) {
  launch("unary_grad", count, stream, unary_grad_kernel<S>, fn, scalar, x, g, count, out);
}

template <class S>
void launch_sum_to(const V<S>* x, std::int64_t rows, std::int64_t features, std::int64_t other_rows, std::int64_t groups, float* partial,
                   V<S>* out, void* stream) {
  if (other_rows == 1 && rows > kSumToChunkRows) {
    const std::int64_t chunks = sum_to_chunks(rows);
    launch("column_partials", chunks * features, stream, column_partials_kernel<S>, x, rows, features, kSumToChunkRows, partial);
    launch("sum_to", groups, stream, sum_to_kernel<Float32Storage, S>, static_cast<const float*>(partial), chunks, features, std::int64_t{1},
           groups, out);
    return;
  }
  launch("sum_to", other_rows * groups, stream, sum_to_kernel<S, S>, x, rows, features, other_rows, groups, out);
}

template <class S>
void launch_loss(LossFn fn, const V<S>* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels, const V<S>* targets,
                 const float* row_weights, float* row_loss, float* weight_sum, V<S>* out, void* stream) {
  launch("loss_rows", rows, stream, loss_rows_kernel<S>, fn, x, rows, cols, labels, targets, row_weights, row_loss);
  if (row_weights != nullptr) {
    launch("weight_sum", 1, stream, weight_sum_kernel, row_weights, rows, weight_sum);
    const float cols_per_term = static_cast<float>(fn == LossFn::cross_entropy ? 1 : cols);
    launch("weighted_loss_mean", 1, stream, weighted_loss_mean_kernel<S>, static_cast<const float*>(row_loss), rows, cols_per_term,
           static_cast<const float*>(weight_sum), out);
    return;
  }
  const float count = static_cast<float>(fn == LossFn::cross_entropy ? rows : rows * cols);
  launch("loss_mean", 1, stream, loss_mean_kernel<S>, static_cast<const float*>(row_loss), rows, count, out);
}

template <class S>
void launch_loss_grad(LossFn fn, const V<S>* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels, const V<S>* targets,
                      const float* row_weights, float* weight_sum, V<S>* out, void* stream) {
  if (row_weights != nullptr) launch("weight_sum", 1, stream, weight_sum_kernel, row_weights, rows, weight_sum);
  launch("loss_grad", rows, stream, loss_grad_kernel<S>, fn, x, rows, cols, labels, targets, row_weights,
         static_cast<const float*>(weight_sum), out);
}

template <class S>
void launch_optimizer_step(const OptimizerSpec& spec, double step, const V<S>* param, const V<S>* grad, const V<S>* state,
                           std::int64_t count, V<S>* out, void* stream) {
  launch("optimizer_step", count, stream, optimizer_step_kernel<S>, optimizer_scalars(spec, step), param, grad, state, count, out);
}

template <class S>
void launch_degree(const std::int32_t* indices, std::int64_t num_indices, std::int64_t num_outputs, V<S>* out, void* stream) {
  launch("fill", num_outputs, stream, fill_kernel<S>, out, num_outputs, 0.0f);
  launch("degree", num_indices, stream, degree_kernel<S>, indices, num_indices, out);
}

template <class S>
void launch_unary(UnaryFn fn, float scalar, const V<S>* in, std::int64_t count, V<S>* out, void* stream) {
  launch("unary", count, stream, unary_kernel<S>, fn, scalar, in, count, out);
}

template <class S>
void launch_binary(BinaryFn fn, const V<S>* in, std::int64_t rows, std::int64_t features, const V<S>* other, std::int64_t other_rows,
                   std::int64_t groups, V<S>* out, void* stream) {
  launch("binary", rows * features, stream, binary_kernel<S>, fn, in, rows, features, other, other_rows, groups, out);
}

template <class S>
void launch_segment_matmul(const V<S>* in, std::int64_t rows, std::int64_t depth, const std::int32_t* offsets, std::int64_t segments,
                           const V<S>* weight, std::int64_t cols, V<S>* out, void* stream) {
  launch("segment_matmul", rows * cols, stream, segment_matmul_kernel<S>, in, rows, depth, offsets, segments, weight, cols, out);
}

template <class In, class Out>
void launch_cast(const V<In>* in, float scale, std::int64_t count, V<Out>* out, void* stream) {
  launch("cast", count, stream, cast_kernel<In, Out>, in, scale, count, out);
}

// The launchers the backend calls, for each storage (declared in cuda_launch.hpp).
#define TILESIM_CUDA_LAUNCHERS(S)                                                                                                          \
  template void launch_gather<S>(const V<S>*, std::int64_t, const std::int32_t*, std::int64_t, V<S>*, void*);                              \
  template void launch_scatter<S>(DeviceReduce, const V<S>*, std::int64_t, std::int64_t, const std::int32_t*, std::int64_t, V<S>*,         \
                                  std::int32_t*, void*);                                                                                   \
  template void launch_matmul<S>(const V<S>*, const V<S>*, std::int64_t, std::int64_t, std::int64_t, const V<S>*, V<S>*, void*);          \
  template void launch_degree<S>(const std::int32_t*, std::int64_t, std::int64_t, V<S>*, void*);                                          \
  template void launch_unary<S>(UnaryFn, float, const V<S>*, std::int64_t, V<S>*, void*);                                                 \
  template void launch_binary<S>(BinaryFn, const V<S>*, std::int64_t, std::int64_t, const V<S>*, std::int64_t, std::int64_t, V<S>*,       \
                                 void*);                                                                                                   \
  template void launch_segment_matmul<S>(const V<S>*, std::int64_t, std::int64_t, const std::int32_t*, std::int64_t, const V<S>*,         \
                                         std::int64_t, V<S>*, void*);                                                                      \
  template void launch_matmul_transposed<S>(const V<S>*, bool, const V<S>*, bool, std::int64_t, std::int64_t, std::int64_t, V<S>*, void*); \
  template void launch_segment_matmul_transposed_weight<S>(const V<S>*, std::int64_t, std::int64_t, const std::int32_t*, std::int64_t,     \
                                                           const V<S>*, std::int64_t, V<S>*, void*);                                       \
  template void launch_segment_matmul_transposed_input<S>(const V<S>*, std::int64_t, const std::int32_t*, std::int64_t, const V<S>*,      \
                                                          std::int64_t, V<S>*, void*);                                                     \
  template void launch_unary_grad<S>(UnaryFn, float, const V<S>*, const V<S>*, std::int64_t, V<S>*, void*);                               \
  template void launch_sum_to<S>(const V<S>*, std::int64_t, std::int64_t, std::int64_t, std::int64_t, float*, V<S>*, void*);              \
  template void launch_loss<S>(LossFn, const V<S>*, std::int64_t, std::int64_t, const std::int32_t*, const V<S>*, const float*, float*,   \
                               float*, V<S>*, void*);                                                                                      \
  template void launch_loss_grad<S>(LossFn, const V<S>*, std::int64_t, std::int64_t, const std::int32_t*, const V<S>*, const float*,      \
                                    float*, V<S>*, void*);                                                                                 \
  template void launch_optimizer_step<S>(const OptimizerSpec&, double, const V<S>*, const V<S>*, const V<S>*, std::int64_t, V<S>*, void*);

TILESIM_CUDA_LAUNCHERS(Float32Storage)
TILESIM_CUDA_LAUNCHERS(Float16Storage)
TILESIM_CUDA_LAUNCHERS(BFloat16Storage)
#undef TILESIM_CUDA_LAUNCHERS

// The cast between every pair of storages.
#define TILESIM_CUDA_CASTS(In)                                                                          \
  template void launch_cast<In, Float32Storage>(const V<In>*, float, std::int64_t, float*, void*);       \
  template void launch_cast<In, Float16Storage>(const V<In>*, float, std::int64_t, std::uint16_t*, void*); \
  template void launch_cast<In, BFloat16Storage>(const V<In>*, float, std::int64_t, std::uint16_t*, void*);

TILESIM_CUDA_CASTS(Float32Storage)
TILESIM_CUDA_CASTS(Float16Storage)
TILESIM_CUDA_CASTS(BFloat16Storage)
#undef TILESIM_CUDA_CASTS

}  // namespace tilesim::kernels::cuda
