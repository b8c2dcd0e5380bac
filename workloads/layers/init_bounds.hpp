#pragma once
// Bounds of the uniform initialisers the layers' parameters are drawn with.
#include <cmath>
#include <cstdint>

namespace tilesim::workloads::layers {

// PyG's glorot / torch's xavier_uniform_: U(-a, a), a = sqrt(6 / (fan_in + fan_out)).
inline double glorot_bound(std::int64_t fan_in, std::int64_t fan_out) {
  return std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
}
// torch.nn.Linear's bias: U(-1/sqrt(fan_in), 1/sqrt(fan_in)). PyG zero-fills GCN, GAT, RGCN and SchNet
// biases; tilesim draws them all like this so that verification sees a wrong bias add.
inline double bias_bound(std::int64_t fan_in) { return 1.0 / std::sqrt(static_cast<double>(fan_in)); }

}  // namespace tilesim::workloads::layers
