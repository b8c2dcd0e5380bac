#pragma once
// Real, parallel (OpenMP) float32 gather and scatter-add on the host CPU. They compute the real
// outputs; the CPU backend times them.
#include <cstdint>

namespace tilesim::kernels::cpu {

// out[i, :] = table[indices[i], :] for i in [0, num_lookups). Indices must lie in [0, num_rows).
void gather_f32(const float* table, std::int64_t num_rows, std::int64_t num_features, const std::int32_t* indices,
                std::int64_t num_lookups, float* out);

// out = 0; out[indices[i], :] += src[i, :] for i in [0, num_messages). Indices must lie in
// [0, num_outputs). Rows no index points at stay zero.
void scatter_add_f32(const float* src, std::int64_t num_messages, std::int64_t num_features,
                     const std::int32_t* indices, std::int64_t num_outputs, float* out);

}  // namespace tilesim::kernels::cpu
