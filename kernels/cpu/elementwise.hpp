#pragma once
// Elementwise ops of the op graph on the host CPU: unary functions (relu, leaky_relu, shifted softplus,
// exp, scale, rsqrt/reciprocal with PyG's zero mask, SchNet's cosine cutoff) and binary ops with the
// op graph's broadcast of `other` (ir/op_graph.hpp, BinaryFn). Threads split the flat array on cache
// lines above parallel::kParallelMinBytes; below it the call runs on the calling thread.
#include <cstdint>

#include "ir/op_graph.hpp"

namespace tilesim::kernels::cpu {

// out[i] = fn(x[i]) for i in [0, count); `scalar` as Op::scalar (leaky_relu slope, scale, cutoff).
void unary_f32(UnaryFn fn, float scalar, const float* x, std::int64_t count, float* out);

// out[r, c] = x[r, c] (fn) other[r', c / (num_features / other_groups)], r' = r, or 0 when other_rows == 1.
void binary_f32(BinaryFn fn, const float* x, std::int64_t num_rows, std::int64_t num_features, const float* other,
                std::int64_t other_rows, std::int64_t other_groups, float* out);

}  // namespace tilesim::kernels::cpu
