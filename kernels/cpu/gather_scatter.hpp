#pragma once
// Real, parallel (OpenMP), AVX-512 gather and scatter-add on the host CPU. They compute the real
// outputs; the CPU backend times them. Scatter mean/max and segment reductions: scatter_reduce.hpp.
#include <cstdint>

#include "kernels/cpu/storage.hpp"

namespace tilesim::kernels::cpu {

// out[i, :] = table[indices[i], :] for i in [0, num_lookups). Indices must lie in [0, num_rows).
// A copy of bits: NaN payloads and -0 come through unchanged.
void gather_f32(const float* table, std::int64_t num_rows, std::int64_t num_features, const std::int32_t* indices,
                std::int64_t num_lookups, float* out);
void gather_f16(const Float16* table, std::int64_t num_rows, std::int64_t num_features, const std::int32_t* indices,
                std::int64_t num_lookups, Float16* out);
void gather_bf16(const BFloat16* table, std::int64_t num_rows, std::int64_t num_features, const std::int32_t* indices,
                 std::int64_t num_lookups, BFloat16* out);

// out = 0; out[indices[i], :] += src[i, :] for i in [0, num_messages). Indices must lie in
// [0, num_outputs). Rows no index points at stay zero. The same bits on every call for a given thread
// count (no atomics; a fixed summation order per strategy).
void scatter_add_f32(const float* src, std::int64_t num_messages, std::int64_t num_features,
                     const std::int32_t* indices, std::int64_t num_outputs, float* out);

}  // namespace tilesim::kernels::cpu
