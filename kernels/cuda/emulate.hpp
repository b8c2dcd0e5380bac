#pragma once
// Runs a kernel body on the host over an emulated 1-D launch grid: every (blockIdx.x, threadIdx.x) of
// the launch, one after another, exactly as the __global__ wrapper would hand them to the body. For
// tests of the indexing logic on machines without a GPU; no timing meaning.
#include "kernels/cuda/kernel_bodies.hpp"

namespace tilesim::kernels::cuda {

template <class Body>
void emulate_launch(LaunchShape shape, Body&& body) {
  for (std::int64_t b = 0; b < shape.blocks; ++b)
    for (std::int64_t t = 0; t < shape.threads_per_block; ++t) body(ThreadIndex{b, shape.threads_per_block, t, shape.blocks});
}

}  // namespace tilesim::kernels::cuda
