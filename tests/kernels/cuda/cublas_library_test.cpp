// cuBLAS is opened on first use rather than linked (kernels/cuda/cublas_library.hpp): the library this
// build was compiled against opens with every entry point the kernels call, and a library that cannot be
// opened is an error naming what was tried. Built with the CUDA kernels only (nvcc found).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#ifdef TILESIM_HAVE_CUDA
#include "kernels/cuda/cublas_library.hpp"

using Catch::Matchers::Contains;

TEST_CASE("cuBLAS opens on first use from the toolkit the kernels were built with", "[cuda][unit]") {
  const std::vector<std::string> candidates = tilesim::kernels::cuda::cublas_candidates();
  REQUIRE(candidates.size() == 2);
  CHECK_THAT(candidates[0], Contains("/libcublas.so."));
  CHECK(candidates[1].rfind("libcublas.so.", 0) == 0);
  // The toolkit this build found (nvcc's) ships the library it compiled against.
  CHECK_NOTHROW(tilesim::kernels::cuda::check_cublas_opens(candidates));
}

TEST_CASE("a cuBLAS that cannot be opened is an error naming every candidate and why", "[cuda][unit]") {
  CHECK_THROWS_WITH(tilesim::kernels::cuda::check_cublas_opens({"/nonexistent/libcublas.so.99", "libc.so.6"}),
                    Contains("/nonexistent/libcublas.so.99") && Contains("libc.so.6: no symbol cublasCreate_v2") &&
                        Contains("cuda backend"));
}
#endif
