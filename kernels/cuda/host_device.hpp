#pragma once
// TILESIM_HD marks the functions that run both in CUDA kernels and in the host tests' emulated launches
// (emulate.hpp): __host__ __device__ under nvcc, nothing for the host compiler.
#ifdef __CUDACC__
#define TILESIM_HD __host__ __device__
#else
#define TILESIM_HD
#endif
