#pragma once
// The CUDA kernels' per-thread bodies, as __host__ __device__ functions: cuda_kernels.cu wraps each in
// a __global__ kernel, and the tests run the very same bodies on the host by emulating the launch grid
// (emulate.hpp), so the indexing of every kernel is tested on machines without a GPU. Plain C++ apart
// from the qualifiers and the atomics, which fall back to ordinary read-modify-writes on the host
// (exact there: an emulated launch runs its threads one after another).
//
// The bodies of the op kinds are templates on a storage policy (value_storage.hpp): S = Float32Storage
// (the default, so float pointers call the float32 kernel as before), Float16Storage or BFloat16Storage.
// Each loads its operands widened to float32, computes in float32 exactly as the float32 kernel does,
// and rounds each result once when it stores it; accumulating kernels keep float32 accumulators, except
// the atomic ones, which add into the half output element by element as ATen does (half_atomics.hpp).
//
// Work is laid out as "items" (one output or message element, or one 16-byte vector of it) over a
// 1-D grid; every body walks its items with a grid-stride loop, so a launch of any size covers any
// amount of work and the tests can use small grids to exercise the stride.
#include <cmath>
#include <cstdint>

#include "ir/op_graph.hpp"  // UnaryFn, BinaryFn
#include "kernels/cuda/half_atomics.hpp"
#include "kernels/cuda/host_device.hpp"
#include "kernels/cuda/value_storage.hpp"

namespace tilesim::kernels::cuda {

// blockIdx.x, blockDim.x, threadIdx.x, gridDim.x of one thread (the kernels use a 1-D grid).
struct ThreadIndex {
  std::int64_t block = 0, block_size = 1, thread = 0, grid_size = 1;
  TILESIM_HD std::int64_t global() const { return block * block_size + thread; }
  TILESIM_HD std::int64_t stride() const { return grid_size * block_size; }
};

struct LaunchShape {
  std::int64_t blocks = 1;
  std::int64_t threads_per_block = 256;
};

// Blocks for `items` of work: one item per thread up to max_blocks (beyond it the grid-stride loop
// takes over), and at least one block so an empty call still launches legally.
inline LaunchShape launch_shape(std::int64_t items, std::int64_t threads_per_block = 256, std::int64_t max_blocks = 65535) {
  LaunchShape s;
  s.threads_per_block = threads_per_block;
  const std::int64_t needed = (items + threads_per_block - 1) / threads_per_block;
  s.blocks = needed < 1 ? 1 : (needed > max_blocks ? max_blocks : needed);
  return s;
}

TILESIM_HD inline float bits_to_float(std::uint32_t b) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(b);
#else
  union {
    std::uint32_t u;
    float f;
  } v{b};
  return v.f;
#endif
}

TILESIM_HD inline void atomic_add(float* address, float value) {
#ifdef __CUDA_ARCH__
  atomicAdd(address, value);
#else
  *address += value;
#endif
}

TILESIM_HD inline void atomic_add(std::int32_t* address, std::int32_t value) {
#ifdef __CUDA_ARCH__
  atomicAdd(reinterpret_cast<int*>(address), value);
#else
  *address += value;
#endif
}

// max(*address, value) for floats. On the device through the integer atomics: non-negative floats
// order like their bit patterns as signed ints, negative ones in reverse as unsigned ints, so one
// atomicMax or atomicMin does it (the address must start at -inf, the identity, or any float).
TILESIM_HD inline void atomic_max(float* address, float value) {
#ifdef __CUDA_ARCH__
  if (value >= 0.0f)
    atomicMax(reinterpret_cast<int*>(address), __float_as_int(value));
  else
    atomicMin(reinterpret_cast<unsigned int*>(address), __float_as_uint(value));
#else
  if (value > *address) *address = value;
#endif
}

// The float32 storage's atomics, beside half_atomics.hpp's 16-bit ones, so a body names one function
// for every storage: atomic_add_stored(S{}, address, value).
TILESIM_HD inline void atomic_add_stored(Float32Storage, float* address, float value) { atomic_add(address, value); }
TILESIM_HD inline void atomic_max_stored(Float32Storage, float* address, float value) { atomic_max(address, value); }

// out[e] = value (rounded to the storage) for e in [0, count): zeroing (sum, mean) or -inf (max) before
// a scatter.
template <class S = Float32Storage>
TILESIM_HD void fill_body(const ThreadIndex& t, typename S::type* out, std::int64_t count, float value) {
  const typename S::type stored_value = S::store(value);
  for (std::int64_t e = t.global(); e < count; e += t.stride()) out[e] = stored_value;
}
TILESIM_HD inline void fill_body(const ThreadIndex& t, std::int32_t* out, std::int64_t count, std::int32_t value) {
  for (std::int64_t e = t.global(); e < count; e += t.stride()) out[e] = value;
}

// Gather, one output element per item: out[i, f] = table[indices[i], f] (a copy: no conversion).
template <class S = Float32Storage>
TILESIM_HD void gather_body(const ThreadIndex& t, const typename S::type* table, std::int64_t num_features, const std::int32_t* indices,
                            std::int64_t num_lookups, typename S::type* out) {
  const std::int64_t items = num_lookups * num_features;
  for (std::int64_t e = t.global(); e < items; e += t.stride()) {
    const std::int64_t i = e / num_features, f = e - i * num_features;
    out[e] = table[static_cast<std::int64_t>(indices[i]) * num_features + f];
  }
}

// Gather in 16-byte vectors, for rows of a multiple of a vector's elements (16-byte aligned rows, as
// cudaMalloc gives): 4 floats or 8 half values a vector, so a fraction of the items and 128-bit loads
// and stores, which is how a warp reaches full memory bandwidth. Items are (lookup, vector of features).
struct Float4 {
  float x, y, z, w;
};
struct alignas(16) Half8 {
  std::uint16_t v[8];
};
template <class S>
struct GatherVector {
  using type = Half8;
};
template <>
struct GatherVector<Float32Storage> {
  using type = Float4;
};
// Elements per gather vector of a storage: 4 for float32, 8 for the 16-bit formats.
template <class S>
TILESIM_HD constexpr std::int64_t gather_vector_elements() {
  return static_cast<std::int64_t>(sizeof(typename GatherVector<S>::type) / sizeof(typename S::type));
}
template <class S>
TILESIM_HD void gather_vector_body(const ThreadIndex& t, const typename S::type* table, std::int64_t num_features,
                                   const std::int32_t* indices, std::int64_t num_lookups, typename S::type* out) {
  using Vector = typename GatherVector<S>::type;
  const std::int64_t vectors_per_row = num_features / gather_vector_elements<S>();
  const std::int64_t items = num_lookups * vectors_per_row;
  const Vector* table_vectors = reinterpret_cast<const Vector*>(table);
  Vector* out_vectors = reinterpret_cast<Vector*>(out);
  for (std::int64_t e = t.global(); e < items; e += t.stride()) {
    const std::int64_t i = e / vectors_per_row, v = e - i * vectors_per_row;
    out_vectors[e] = table_vectors[static_cast<std::int64_t>(indices[i]) * vectors_per_row + v];
  }
}
// The float32 name: 4 floats a vector.
TILESIM_HD inline void gather_vec4_body(const ThreadIndex& t, const float* table, std::int64_t num_features, const std::int32_t* indices,
                                        std::int64_t num_lookups, float* out) {
  gather_vector_body<Float32Storage>(t, table, num_features, indices, num_lookups, out);
}

// Scatter with atomics, one message element per item: out[indices[m], f] op= src[m, f]. Consecutive
// threads take consecutive features of one message, so a warp's atomics hit one output row's
// consecutive addresses (coalesced, no two threads of a warp on one address unless rows repeat).
// counts (mean, max; may be null) gets one increment per message, from its feature-0 thread.
// In a half dtype the sum adds into the half output, each addition rounding in the dtype (ATen's
// scatter_add_ on CUDA).
enum class ScatterOp { add, max };
template <class S = Float32Storage>
TILESIM_HD void scatter_atomic_body(const ThreadIndex& t, ScatterOp op, const typename S::type* src, std::int64_t num_messages,
                                    std::int64_t num_features, const std::int32_t* indices, typename S::type* out, std::int32_t* counts) {
  const std::int64_t items = num_messages * num_features;
  for (std::int64_t e = t.global(); e < items; e += t.stride()) {
    const std::int64_t m = e / num_features, f = e - m * num_features;
    const std::int64_t r = indices[m];
    typename S::type* target = out + r * num_features + f;
    if (op == ScatterOp::add)
      atomic_add_stored(S{}, target, S::load(src[e]));
    else
      atomic_max_stored(S{}, target, S::load(src[e]));
    if (counts != nullptr && f == 0) atomic_add(counts + r, 1);
  }
}

// After a counted scatter: mean divides each row by its count; rows no message reached become 0
// (max's -inf identity included). One output element per item. In a half dtype the mean divides the
// half sum in float32 and rounds the quotient (ATen's division of the half sum by the counts).
template <class S = Float32Storage>
TILESIM_HD void finish_body(const ThreadIndex& t, bool mean, const std::int32_t* counts, std::int64_t num_outputs,
                            std::int64_t num_features, typename S::type* out) {
  const std::int64_t items = num_outputs * num_features;
  for (std::int64_t e = t.global(); e < items; e += t.stride()) {
    const std::int32_t n = counts[e / num_features];
    if (n == 0)
      out[e] = S::store(0.0f);
    else if (mean)
      out[e] = S::store(S::load(out[e]) / static_cast<float>(n));
  }
}

// Segment reduction and SpMM below are float32 only: no op kind runs them on the device (they are the
// scatter's and a GNN layer's alternatives, kept for comparison).

// Segment reduction over sorted indices (CSR offsets), owner computes: one output element per item,
// summed or maxed over its segment in message order, no atomics; each element written once.
// op: 0 sum, 1 mean, 2 max; empty segments give 0.
TILESIM_HD inline void segment_body(const ThreadIndex& t, int op, const float* src, std::int64_t num_features, const std::int64_t* offsets,
                                    std::int64_t num_segments, float* out) {
  const std::int64_t items = num_segments * num_features;
  for (std::int64_t e = t.global(); e < items; e += t.stride()) {
    const std::int64_t s = e / num_features, f = e - s * num_features;
    const std::int64_t begin = offsets[s], end = offsets[s + 1];
    float acc = op == 2 ? bits_to_float(0xFF800000u) : 0.0f;  // -inf for max
    for (std::int64_t m = begin; m < end; ++m) {
      const float x = src[m * num_features + f];
      acc = op == 2 ? (x > acc ? x : acc) : acc + x;
    }
    if (end == begin) acc = 0.0f;
    else if (op == 1) acc = acc / static_cast<float>(end - begin);
    out[e] = acc;
  }
}

// SpMM with atomics, one edge element per item: out[dst[e], f] += weights[e] * x[src[e], f].
TILESIM_HD inline void spmm_atomic_body(const ThreadIndex& t, const float* x, std::int64_t num_features, const std::int32_t* src_nodes,
                                        const std::int32_t* dst_nodes, const float* weights, std::int64_t num_edges, float* out) {
  const std::int64_t items = num_edges * num_features;
  for (std::int64_t e = t.global(); e < items; e += t.stride()) {
    const std::int64_t edge = e / num_features, f = e - edge * num_features;
    const float term = weights[edge] * x[static_cast<std::int64_t>(src_nodes[edge]) * num_features + f];
    atomic_add(out + static_cast<std::int64_t>(dst_nodes[edge]) * num_features + f, term);
  }
}

// SpMM over destination-sorted edges (CSR), owner computes: one output element per item, no atomics.
TILESIM_HD inline void spmm_csr_body(const ThreadIndex& t, const float* x, std::int64_t num_features, const std::int64_t* offsets,
                                     const std::int32_t* src_nodes, const float* weights, std::int64_t num_outputs, float* out) {
  const std::int64_t items = num_outputs * num_features;
  for (std::int64_t e = t.global(); e < items; e += t.stride()) {
    const std::int64_t d = e / num_features, f = e - d * num_features;
    float acc = 0.0f;
    for (std::int64_t edge = offsets[d]; edge < offsets[d + 1]; ++edge) {
      const float term = weights[edge] * x[static_cast<std::int64_t>(src_nodes[edge]) * num_features + f];
      acc += term;
    }
    out[e] = acc;
  }
}

// ---- The GNN op kinds beyond gather and scatter (ir/op_graph.hpp): degree count, elementwise unary and
// binary with broadcast, segment matmul. (matmul itself goes through cuBLAS: cuda_launch.hpp.)

// degree_count, one index per item: out[indices[e]] += 1 after a zero fill. Float counts are exact below
// 2^24 per node, like PyG's degree() in the values' dtype; half counts by adding ones into the half
// output, exact up to 2^11 (float16) or 2^8 (bfloat16), then rounding as PyG's would.
template <class S = Float32Storage>
TILESIM_HD void degree_body(const ThreadIndex& t, const std::int32_t* indices, std::int64_t num_indices, typename S::type* out) {
  for (std::int64_t e = t.global(); e < num_indices; e += t.stride()) atomic_add_stored(S{}, out + indices[e], 1.0f);
}

// f(x) for the op graph's unary functions, in float32 as PyG's CUDA calls compute them: softplus in its
// overflow-free form max(x, 0) + log1p(e^-|x|) (SchNet's ShiftedSoftplus then subtracts log 2); the
// cosine cutoff as CFConv's 0.5 (cos(pi x / cutoff) + 1), 0 from the cutoff on. `scalar` is the leaky
// slope, the scale factor or the cutoff.
TILESIM_HD inline float unary_value(UnaryFn fn, float x, float scalar) {
  switch (fn) {
    case UnaryFn::relu: return x > 0.0f ? x : 0.0f;
    case UnaryFn::leaky_relu: return x >= 0.0f ? x : scalar * x;
    case UnaryFn::shifted_softplus: return (fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x)))) - 0.693147180559945309f;
    case UnaryFn::exp: return expf(x);
    case UnaryFn::scale: return scalar * x;
    case UnaryFn::rsqrt_or_zero: return x > 0.0f ? 1.0f / sqrtf(x) : 0.0f;
    case UnaryFn::reciprocal_or_zero: return x != 0.0f ? 1.0f / x : 0.0f;
    case UnaryFn::cosine_cutoff: return x < scalar ? 0.5f * (cosf(x * (3.14159265358979323846f / scalar)) + 1.0f) : 0.0f;
    case UnaryFn::softplus: return x > 20.0f ? x : fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x)));
    case UnaryFn::sigmoid: return 1.0f / (1.0f + expf(-x));
    case UnaryFn::sqrt: return sqrtf(x);
    case UnaryFn::log: return logf(x);
    case UnaryFn::clamp_min: return x < scalar ? scalar : x;  // NaN stays NaN
  }
  return x;
}

// Unary, one element per item.
template <class S = Float32Storage>
TILESIM_HD void unary_body(const ThreadIndex& t, UnaryFn fn, float scalar, const typename S::type* in, std::int64_t count,
                           typename S::type* out) {
  for (std::int64_t e = t.global(); e < count; e += t.stride()) out[e] = S::store(unary_value(fn, S::load(in[e]), scalar));
}

TILESIM_HD inline float binary_value(BinaryFn fn, float a, float b) {
  switch (fn) {
    case BinaryFn::add: return a + b;
    case BinaryFn::subtract: return a - b;
    case BinaryFn::multiply: return a * b;
    case BinaryFn::divide: return a / b;
    case BinaryFn::equal: return a == b ? 1.0f : 0.0f;
  }
  return a;
}

// Binary with the op graph's broadcast (ir/op_graph.hpp BinaryFn): out[r, c] = in[r, c] (op)
// other[r', c / (features / groups)], r' = r, or 0 when `other` has one row. One element per item.
template <class S = Float32Storage>
TILESIM_HD void binary_body(const ThreadIndex& t, BinaryFn fn, const typename S::type* in, std::int64_t rows, std::int64_t features,
                            const typename S::type* other, std::int64_t other_rows, std::int64_t groups, typename S::type* out) {
  const std::int64_t items = rows * features, width = features / groups;
  for (std::int64_t e = t.global(); e < items; e += t.stride()) {
    const std::int64_t r = e / features, c = e - r * features;
    const float b = S::load(other[(other_rows == 1 ? 0 : r) * groups + c / width]);
    out[e] = S::store(binary_value(fn, S::load(in[e]), b));
  }
}

// cast (ir/op_graph.hpp), one element per item: the input widened from its storage In, times the scale
// in float32 (exact for a power of two, as a loss scale is), rounded once into the output's storage Out
// (to nearest even: __float2half_rn and __float2bfloat16_rn on the device, ir/half_float.hpp's
// conversions in the host emulation). The one body with two storages: a mixed-precision training step's
// master weights, float32 loss and scaled gradients cross dtypes here.
template <class In, class Out>
TILESIM_HD void cast_body(const ThreadIndex& t, const typename In::type* in, float scale, std::int64_t count, typename Out::type* out) {
  for (std::int64_t e = t.global(); e < count; e += t.stride()) out[e] = Out::store(In::load(in[e]) * scale);
}

// The segment of `row` under non-decreasing offsets (offsets[0] = 0 <= row < offsets[segments]): the
// last s with offsets[s] <= row, which skips empty segments (offsets[s] == offsets[s + 1]).
TILESIM_HD inline std::int64_t segment_of(const std::int32_t* offsets, std::int64_t segments, std::int64_t row) {
  std::int64_t lo = 0, hi = segments;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (offsets[mid] <= row) lo = mid;
    else hi = mid;
  }
  return lo;
}

// Segment matmul, one output element per item: out[r, c] = sum_k in[r, k] weight[s(r), k, c]. Consecutive
// threads take consecutive columns, so a warp reads one input row (broadcast) and consecutive weight
// elements (coalesced). A plain dot product per thread: the kernel for correctness on any segment
// sizes, not a tuned grouped GEMM. A float32 accumulator in every dtype (a half GEMM's accumulation).
template <class S = Float32Storage>
TILESIM_HD void segment_matmul_body(const ThreadIndex& t, const typename S::type* in, std::int64_t rows, std::int64_t depth,
                                    const std::int32_t* offsets, std::int64_t segments, const typename S::type* weight, std::int64_t cols,
                                    typename S::type* out) {
  const std::int64_t items = rows * cols;
  for (std::int64_t e = t.global(); e < items; e += t.stride()) {
    const std::int64_t r = e / cols, c = e - r * cols;
    const typename S::type* w = weight + segment_of(offsets, segments, r) * depth * cols + c;
    const typename S::type* x = in + r * depth;
    float acc = 0.0f;
    for (std::int64_t k = 0; k < depth; ++k) acc += S::load(x[k]) * S::load(w[k * cols]);
    out[e] = S::store(acc);
  }
}

}  // namespace tilesim::kernels::cuda
