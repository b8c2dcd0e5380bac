#pragma once
// cuBLAS's entry points, opened on first use instead of linked (kernels/cuda/cublas_library.hpp says
// why); for the CUDA kernels, which include cuBLAS's header.
#include <string>
#include <vector>

#include <cublas_v2.h>

#include "kernels/cuda/cublas_library.hpp"

namespace tilesim::kernels::cuda {

// The cuBLAS entry points the kernels call (cublas_v2.h names them; the library exports the _v2 forms).
struct CublasLibrary {
  decltype(&cublasCreate) create = nullptr;
  decltype(&cublasSetStream) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasSgemm) sgemm = nullptr;
  // The exported cublasGemmEx, which takes a cublasComputeType_t (the header also has an inline C++
  // overload taking a cudaDataType, so the name alone names no one function).
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
                            cudaDataType, int, const void*, cudaDataType, int, const void*, void*, cudaDataType, int,
                            cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
};

// Opens the first of `candidates` (paths or sonames, as dlopen takes them) that loads and resolves
// every entry point. Throws std::runtime_error naming each candidate and why it failed.
CublasLibrary open_cublas(const std::vector<std::string>& candidates);

// The cuBLAS this build was compiled against (its soname in the toolkit's library folder, then the
// soname on the loader's search path), opened once per process.
const CublasLibrary& cublas_library();

}  // namespace tilesim::kernels::cuda
