#pragma once
// torch-cpu: the measured peer backend. Runs each op of a graph through libtorch's ATen kernels the way
// PyTorch Geometric calls them (gather: index_select; scatter_add: scatter_add_ with the index broadcast
// over features), on ATen's OpenMP pool set to the CPU kernels' thread count, timed and verified like
// the cpu backend; a training step through autograd and torch::optim instead (torch_training.hpp). Optional at build time: without libtorch, make_backend() throws an InputError
// saying how to get it. No libtorch header here (see torch_ops.hpp). Two implementations of this header:
// torch_backend.cpp (the backend itself, linked by the benchmark, its tests and the plugin) and
// torch_loader.cpp (the tilesim command's: loads the plugin on first use); torch_missing.cpp without libtorch.
#include <memory>
#include <string>

#include "results/backend.hpp"

namespace tilesim::kernels::torch_peer {

// Whether this build links libtorch.
bool built_in();
// "libtorch 1.13.0 (ATen, 2 threads)" when built in, else why not.
std::string description();
// The torch-cpu backend; throws tilesim::InputError (exit 2) when this build has no libtorch.
std::unique_ptr<Backend> make_backend();

}  // namespace tilesim::kernels::torch_peer
