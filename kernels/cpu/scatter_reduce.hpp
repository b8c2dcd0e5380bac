#pragma once
// Scatter reductions on the host CPU (PyG's scatter(src, index, reduce=...)) and their sorted-index
// form, segment reduction. Storage may be float32, float16 or bfloat16; every combination of values is
// done in float32 and a 16-bit result is rounded once, when stored.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cpu/storage.hpp"

namespace tilesim::kernels::cpu {

enum class Reduce { sum, mean, max };
std::string to_string(Reduce reduce);
std::optional<Reduce> reduce_from_string(const std::string& name);  // "sum", "mean", "max"

// out[r, :] = reduce over the messages i with indices[i] == r of src[i, :], for r in [0, num_outputs).
// Rows no message reaches are 0 for every reduction (PyG's convention). Indices must lie in
// [0, num_outputs); callers check them (a bad one would write outside `out`). Picks its strategy from
// the shape, and takes the segment path when the indices happen to be sorted.
template <class T>
void scatter_reduce(Reduce reduce, const T* src, std::int64_t num_messages, std::int64_t num_features,
                    const std::int32_t* indices, std::int64_t num_outputs, T* out);

// The same reduction over sorted indices given as segment offsets: messages offsets[s] .. offsets[s+1]-1
// reduce into out[s], for s in [0, num_segments); offsets has num_segments + 1 non-decreasing entries
// from 0 (segment_offsets() makes them). Each output row is written once, with no zeroing pass and no
// per-thread copies: the fastest form whenever the indices are sorted (CSR order).
template <class T>
void segment_reduce(Reduce reduce, const T* src, std::int64_t num_features, const std::int64_t* offsets,
                    std::int64_t num_segments, T* out);

// Offsets of the segments of sorted indices in [0, num_segments): num_segments + 1 entries. Throws
// tilesim::InputError naming the first index that is out of range or smaller than the one before it.
std::vector<std::int64_t> segment_offsets(const std::int32_t* sorted_indices, std::int64_t count, std::int64_t num_segments);

// True when indices[i] <= indices[i + 1] throughout.
bool indices_sorted(const std::int32_t* indices, std::int64_t count);

extern template void scatter_reduce<float>(Reduce, const float*, std::int64_t, std::int64_t, const std::int32_t*, std::int64_t, float*);
extern template void scatter_reduce<Float16>(Reduce, const Float16*, std::int64_t, std::int64_t, const std::int32_t*, std::int64_t, Float16*);
extern template void scatter_reduce<BFloat16>(Reduce, const BFloat16*, std::int64_t, std::int64_t, const std::int32_t*, std::int64_t, BFloat16*);
extern template void segment_reduce<float>(Reduce, const float*, std::int64_t, const std::int64_t*, std::int64_t, float*);
extern template void segment_reduce<Float16>(Reduce, const Float16*, std::int64_t, const std::int64_t*, std::int64_t, Float16*);
extern template void segment_reduce<BFloat16>(Reduce, const BFloat16*, std::int64_t, const std::int64_t*, std::int64_t, BFloat16*);

}  // namespace tilesim::kernels::cpu
