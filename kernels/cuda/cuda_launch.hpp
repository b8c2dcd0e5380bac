#pragma once
// Host-side launchers of the CUDA kernels (cuda_kernels.cu), on device pointers and a stream passed as
// void* (a cudaStream_t) so that this header needs no CUDA header. Each launcher checks the launch and
// throws std::runtime_error naming the kernel and CUDA's error when it fails.
#include <cstdint>

#include "ir/op_graph.hpp"  // UnaryFn, BinaryFn

namespace tilesim::kernels::cuda {

// The reductions of the scatter and segment kernels, numbered as kernel_bodies.hpp's segment_body.
enum class DeviceReduce { sum = 0, mean = 1, max = 2 };

// out = table[indices]; the 16-byte vector kernel when rows are a multiple of 4 floats.
void launch_gather(const float* table, std::int64_t num_features, const std::int32_t* indices, std::int64_t num_lookups, float* out,
                   void* stream);
// out = scatter-reduce of src by indices, zero for rows no message reaches: fill, atomic scatter, and
// for mean and max a finishing pass over `counts` (num_outputs ints, device; unused for sum).
void launch_scatter(DeviceReduce reduce, const float* src, std::int64_t num_messages, std::int64_t num_features,
                    const std::int32_t* indices, std::int64_t num_outputs, float* out, std::int32_t* counts, void* stream);
// Segment reduction over CSR offsets (num_segments + 1 int64, device): no atomics.
void launch_segment(DeviceReduce reduce, const float* src, std::int64_t num_features, const std::int64_t* offsets,
                    std::int64_t num_segments, float* out, void* stream);
// SpMM: with atomics over edges in any order, or owner-computes over destination-sorted edges (CSR).
void launch_spmm_atomic(const float* x, std::int64_t num_features, const std::int32_t* src_nodes, const std::int32_t* dst_nodes,
                        const float* weights, std::int64_t num_edges, std::int64_t num_outputs, float* out, void* stream);
void launch_spmm_csr(const float* x, std::int64_t num_features, const std::int64_t* offsets, const std::int32_t* src_nodes,
                     const float* weights, std::int64_t num_outputs, float* out, void* stream);
// c = a @ b (+ bias broadcast over rows), row-major, through cuBLAS SGEMM (the tuned library, as the
// CPU side uses OpenBLAS).
void launch_matmul(const float* a, const float* b, std::int64_t m, std::int64_t k, std::int64_t n, const float* bias, float* c,
                   void* stream);

// Degree count: out (num_outputs floats) zero-filled, then one atomic increment per index.
void launch_degree(const std::int32_t* indices, std::int64_t num_indices, std::int64_t num_outputs, float* out, void* stream);
// Elementwise f(in) over `count` floats.
void launch_unary(UnaryFn fn, float scalar, const float* in, std::int64_t count, float* out, void* stream);
// Elementwise in (op) other with the op graph's broadcast of `other` ([other_rows, groups]).
void launch_binary(BinaryFn fn, const float* in, std::int64_t rows, std::int64_t features, const float* other, std::int64_t other_rows,
                   std::int64_t groups, float* out, void* stream);
// Segment matmul over int32 offsets (segments + 1, device): out[rows, cols] = in[rows, depth] @ weight[s].
void launch_segment_matmul(const float* in, std::int64_t rows, std::int64_t depth, const std::int32_t* offsets, std::int64_t segments,
                           const float* weight, std::int64_t cols, float* out, void* stream);

// The training step's kinds (training_bodies.hpp). A matmul with either operand stored transposed
// (cuBLAS reads it transposed; no bias).
void launch_matmul_transposed(const float* a, bool a_transposed, const float* b, bool b_transposed, std::int64_t m, std::int64_t k,
                              std::int64_t n, float* c, void* stream);
// segment_matmul's backward forms: the input's gradient, out[rows, cols] = in[rows, depth] @ weight[s]^T
// with weight stored [segments, cols, depth]; the weight's gradient, out[segments * depth, cols] =
// in_s^T @ g_s per segment (g [rows, cols]).
void launch_segment_matmul_transposed_weight(const float* in, std::int64_t rows, std::int64_t depth, const std::int32_t* offsets,
                                             std::int64_t segments, const float* weight, std::int64_t cols, float* out, void* stream);
void launch_segment_matmul_transposed_input(const float* in, std::int64_t depth, const std::int32_t* offsets, std::int64_t segments,
                                            const float* g, std::int64_t cols, float* out, void* stream);
void launch_unary_grad(UnaryFn fn, float scalar, const float* x, const float* g, std::int64_t count, float* out, void* stream);
// Sums over more than kSumToChunkRows rows go through `partial` (sum_to_chunks(rows) * features floats).
void launch_sum_to(const float* x, std::int64_t rows, std::int64_t features, std::int64_t other_rows, std::int64_t groups, float* partial,
                   float* out, void* stream);
// The mean loss into out[0]; row_loss is `rows` floats of device scratch. With row_weights [rows] (null:
// unweighted) the mean is weighted (ir/op_graph.hpp, LossFn) and weight_sum is one float of device
// scratch for the weights' sum; both are null without weights.
void launch_loss(LossFn fn, const float* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels, const float* targets,
                 const float* row_weights, float* row_loss, float* weight_sum, float* out, void* stream);
void launch_loss_grad(LossFn fn, const float* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels, const float* targets,
                      const float* row_weights, float* weight_sum, float* out, void* stream);
// One update of `count` parameters (out [1 + S, count]); `step` is Adam's t, read on the host.
void launch_optimizer_step(const OptimizerSpec& spec, double step, const float* param, const float* grad, const float* state,
                           std::int64_t count, float* out, void* stream);

}  // namespace tilesim::kernels::cuda
