#pragma once
// Degree count on the host CPU (PyG's torch_geometric.utils.degree): out[n] = number of i with
// indices[i] == n, as float, for n in [0, num_outputs). Indices must lie in [0, num_outputs) (callers
// check them).
#include <cstdint>

namespace tilesim::kernels::cpu {

void degree_count_f32(const std::int32_t* indices, std::int64_t count, std::int64_t num_outputs, float* out);

}  // namespace tilesim::kernels::cpu
