#pragma once
// SpMM-style fused gather-scale-scatter: one message-passing step with edge weights, in one pass.
// PyG's unfused form gathers x[src] into an E x F temporary, scales it and scatters it (three passes
// over E x F values); fused, each edge's row goes from the node table straight into a float32
// accumulator. Not yet an op of the op graph: the kernel, its reference and the torch peer exist for
// the benchmark and for the GNN ops when they land.
#include <cstdint>

#include "kernels/cpu/storage.hpp"

namespace tilesim::kernels::cpu {

// out[d, :] = sum over the edges e with dst_nodes[e] == d of weights[e] * x[src_nodes[e], :], for d in
// [0, num_outputs); rows no edge reaches are 0. src_nodes must lie in [0, num_nodes), dst_nodes in
// [0, num_outputs) (callers check them). Each term is rounded once (multiply, then add; no fused
// multiply-add). Sorted dst_nodes (CSR order) take the segment path; otherwise as scatter_reduce.
template <class T>
void gather_scale_scatter(const T* x, std::int64_t num_nodes, std::int64_t num_features, const std::int32_t* src_nodes,
                          const std::int32_t* dst_nodes, const float* weights, std::int64_t num_edges, std::int64_t num_outputs,
                          T* out);

extern template void gather_scale_scatter<float>(const float*, std::int64_t, std::int64_t, const std::int32_t*, const std::int32_t*,
                                                 const float*, std::int64_t, std::int64_t, float*);
extern template void gather_scale_scatter<Float16>(const Float16*, std::int64_t, std::int64_t, const std::int32_t*,
                                                   const std::int32_t*, const float*, std::int64_t, std::int64_t, Float16*);
extern template void gather_scale_scatter<BFloat16>(const BFloat16*, std::int64_t, std::int64_t, const std::int32_t*,
                                                    const std::int32_t*, const float*, std::int64_t, std::int64_t, BFloat16*);

}  // namespace tilesim::kernels::cpu
