#include "kernels/cuda/cublas_entry_points.hpp"

#include <dlfcn.h>

#include <stdexcept>

namespace tilesim::kernels::cuda {

namespace {

// The symbol behind a cublas_v2.h name: the header maps cublasCreate to cublasCreate_v2 and so on.
template <class Function>
bool resolve(void* library, const char* symbol, Function& slot) {
  slot = reinterpret_cast<Function>(dlsym(library, symbol));
  return slot != nullptr;
}

}  // namespace

CublasLibrary open_cublas(const std::vector<std::string>& candidates) {
  std::string tried;
  for (const std::string& candidate : candidates) {
    void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char* why = dlerror();
      tried += "\n  " + candidate + ": " + (why ? why : "cannot be opened");
      continue;
    }
    CublasLibrary c;
    const char* missing = nullptr;
    if (!resolve(library, "cublasCreate_v2", c.create)) missing = "cublasCreate_v2";
    else if (!resolve(library, "cublasSetStream_v2", c.set_stream)) missing = "cublasSetStream_v2";
    else if (!resolve(library, "cublasSetMathMode", c.set_math_mode)) missing = "cublasSetMathMode";
    else if (!resolve(library, "cublasSgemm_v2", c.sgemm)) missing = "cublasSgemm_v2";
    else if (!resolve(library, "cublasGemmEx", c.gemm_ex)) missing = "cublasGemmEx";
    if (!missing) return c;  // kept open for the process's life, as a linked library would be
    tried += "\n  " + candidate + ": no symbol " + missing;
    dlclose(library);
  }
  throw std::runtime_error("cuBLAS could not be opened (the cuda backend's GEMMs need the CUDA toolkit's libcublas); tried:" +
                           tried);
}

std::vector<std::string> cublas_candidates() {
  const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  return {std::string(TILESIM_CUBLAS_DIR) + "/" + soname, soname};
}

void check_cublas_opens(const std::vector<std::string>& candidates) { open_cublas(candidates); }

const CublasLibrary& cublas_library() {
  static const CublasLibrary library = open_cublas(cublas_candidates());
  return library;
}

}  // namespace tilesim::kernels::cuda
