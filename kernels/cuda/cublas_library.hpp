#pragma once
// cuBLAS, opened on first use instead of linked. Linked, libcublas (and libcublasLt, which it pulls in)
// is loaded and initialised by every process that links the cuda backend, whether or not it runs a
// GEMM: about 0.12 s of CPU at each start on this project's host, paid by every `tilesim` command and
// every test process. The cuda backend's GEMMs are its only users, so they open it
// (kernels/cuda/cublas_entry_points.hpp). This header needs no CUDA header.
#include <string>
#include <vector>

namespace tilesim::kernels::cuda {

// The libraries cublas_library() tries, in order: the soname of the cuBLAS this build was compiled
// against in the toolkit's library folder, then that soname on the loader's search path.
std::vector<std::string> cublas_candidates();

// Opens the first of `candidates` that loads and has every entry point the kernels call; throws
// std::runtime_error naming each candidate and why it failed (no file, a missing symbol).
void check_cublas_opens(const std::vector<std::string>& candidates);

}  // namespace tilesim::kernels::cuda
