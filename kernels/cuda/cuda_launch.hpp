#pragma once
// Host-side launchers of the CUDA kernels (cuda_kernels.cu), on device pointers and a stream passed as
// void* (a cudaStream_t) so that this header needs no CUDA header. Each launcher checks the launch and
// throws std::runtime_error naming the kernel and CUDA's error when it fails.
//
// The launchers of the op kinds are templates on the values' storage (value_storage.hpp), instantiated
// in cuda_kernels.cu for Float32Storage, Float16Storage and BFloat16Storage: "float" below means an
// element of that storage. Scratch the kernels accumulate in (the loss's row losses, the column sums'
// partials, the weights' sum) and a loss's row weights are float32 in every dtype.
#include <cstdint>

#include "ir/op_graph.hpp"  // UnaryFn, BinaryFn
#include "kernels/cuda/value_storage.hpp"

namespace tilesim::kernels::cuda {

// The reductions of the scatter and segment kernels, numbered as kernel_bodies.hpp's segment_body.
enum class DeviceReduce { sum = 0, mean = 1, max = 2 };

// out = table[indices]; the 16-byte vector kernel when rows are a multiple of a vector (4 floats, 8
// half values).
template <class S>
void launch_gather(const typename S::type* table, std::int64_t num_features, const std::int32_t* indices, std::int64_t num_lookups,
                   typename S::type* out, void* stream);
// out = scatter-reduce of src by indices, zero for rows no message reaches: fill, atomic scatter, and
// for mean and max a finishing pass over `counts` (num_outputs ints, device; unused for sum).
template <class S>
void launch_scatter(DeviceReduce reduce, const typename S::type* src, std::int64_t num_messages, std::int64_t num_features,
                    const std::int32_t* indices, std::int64_t num_outputs, typename S::type* out, std::int32_t* counts, void* stream);
// float32 only (no op kind runs them here): segment reduction and the two SpMM kernels.
// Segment reduction over CSR offsets (num_segments + 1 int64, device): no atomics.
void launch_segment(DeviceReduce reduce, const float* src, std::int64_t num_features, const std::int64_t* offsets,
                    std::int64_t num_segments, float* out, void* stream);
// SpMM: with atomics over edges in any order, or owner-computes over destination-sorted edges (CSR).
void launch_spmm_atomic(const float* x, std::int64_t num_features, const std::int32_t* src_nodes, const std::int32_t* dst_nodes,
                        const float* weights, std::int64_t num_edges, std::int64_t num_outputs, float* out, void* stream);
void launch_spmm_csr(const float* x, std::int64_t num_features, const std::int64_t* offsets, const std::int32_t* src_nodes,
                     const float* weights, std::int64_t num_outputs, float* out, void* stream);
// c = a @ b (+ bias broadcast over rows), row-major, through cuBLAS (the tuned library, as the CPU side
// uses OpenBLAS): SGEMM for float32; for a half dtype cublasGemmEx on half inputs and output with
// CUBLAS_COMPUTE_32F (tensor cores, float32 accumulation, one rounding of each output: PyTorch's half
// matmul), reduced-precision split-K reductions disallowed so the accumulation stays float32.
template <class S>
void launch_matmul(const typename S::type* a, const typename S::type* b, std::int64_t m, std::int64_t k, std::int64_t n,
                   const typename S::type* bias, typename S::type* c, void* stream);

// Degree count: out (num_outputs floats) zero-filled, then one atomic increment per index.
template <class S>
void launch_degree(const std::int32_t* indices, std::int64_t num_indices, std::int64_t num_outputs, typename S::type* out, void* stream);
// Elementwise f(in) over `count` floats.
template <class S>
void launch_unary(UnaryFn fn, float scalar, const typename S::type* in, std::int64_t count, typename S::type* out, void* stream);
// Elementwise in (op) other with the op graph's broadcast of `other` ([other_rows, groups]).
template <class S>
void launch_binary(BinaryFn fn, const typename S::type* in, std::int64_t rows, std::int64_t features, const typename S::type* other,
                   std::int64_t other_rows, std::int64_t groups, typename S::type* out, void* stream);
// out = In -> Out conversion of `count` values times `scale` (the cast op; cast_body). Instantiated for
// every pair of the three storages.
template <class In, class Out>
void launch_cast(const typename In::type* in, float scale, std::int64_t count, typename Out::type* out, void* stream);
// Segment matmul over int32 offsets (segments + 1, device): out[rows, cols] = in[rows, depth] @ weight[s].
template <class S>
void launch_segment_matmul(const typename S::type* in, std::int64_t rows, std::int64_t depth, const std::int32_t* offsets,
                           std::int64_t segments, const typename S::type* weight, std::int64_t cols, typename S::type* out, void* stream);

// The training step's kinds (training_bodies.hpp). A matmul with either operand stored transposed
// (cuBLAS reads it transposed; no bias).
template <class S>
void launch_matmul_transposed(const typename S::type* a, bool a_transposed, const typename S::type* b, bool b_transposed, std::int64_t m,
                              std::int64_t k, std::int64_t n, typename S::type* c, void* stream);
// segment_matmul's backward forms: the input's gradient, out[rows, cols] = in[rows, depth] @ weight[s]^T
// with weight stored [segments, cols, depth]; the weight's gradient, out[segments * depth, cols] =
// in_s^T @ g_s per segment (g [rows, cols]).
template <class S>
void launch_segment_matmul_transposed_weight(const typename S::type* in, std::int64_t rows, std::int64_t depth, const std::int32_t* offsets,
                                             std::int64_t segments, const typename S::type* weight, std::int64_t cols, typename S::type* out,
                                             void* stream);
template <class S>
void launch_segment_matmul_transposed_input(const typename S::type* in, std::int64_t depth, const std::int32_t* offsets,
                                            std::int64_t segments, const typename S::type* g, std::int64_t cols, typename S::type* out,
                                            void* stream);
template <class S>
void launch_unary_grad(UnaryFn fn, float scalar, const typename S::type* x, const typename S::type* g, std::int64_t count,
                       typename S::type* out, void* stream);
// Sums over more than kSumToChunkRows rows go through `partial` (sum_to_chunks(rows) * features
// float32s, whatever the dtype).
template <class S>
void launch_sum_to(const typename S::type* x, std::int64_t rows, std::int64_t features, std::int64_t other_rows, std::int64_t groups,
                   float* partial, typename S::type* out, void* stream);
// The mean loss into out[0]; row_loss is `rows` float32s of device scratch. With row_weights [rows]
// (float32; null: unweighted) the mean is weighted (ir/op_graph.hpp, LossFn) and weight_sum is one
// float32 of device scratch for the weights' sum; both are null without weights.
template <class S>
void launch_loss(LossFn fn, const typename S::type* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels,
                 const typename S::type* targets, const float* row_weights, float* row_loss, float* weight_sum, typename S::type* out,
                 void* stream);
template <class S>
void launch_loss_grad(LossFn fn, const typename S::type* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels,
                      const typename S::type* targets, const float* row_weights, float* weight_sum, typename S::type* out, void* stream);
// One update of `count` parameters (out [1 + S, count]); `step` is Adam's t, read on the host.
template <class S>
void launch_optimizer_step(const OptimizerSpec& spec, double step, const typename S::type* param, const typename S::type* grad,
                           const typename S::type* state, std::int64_t count, typename S::type* out, void* stream);

}  // namespace tilesim::kernels::cuda
