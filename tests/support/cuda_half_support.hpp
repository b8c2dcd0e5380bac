#pragma once
// What the CUDA half-body tests share: the grids a body runs on, operands in a 16-bit storage, and the
// check of a half output (every element a value of the dtype, and within tilesim's reference bounds for
// an op of that dtype, ir/reference/reference.hpp verify()).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <vector>

#include "ir/dtype.hpp"
#include "ir/op_graph.hpp"
#include "ir/reference/reference.hpp"
#include "ir/tensor_values.hpp"
#include "kernels/cuda/emulate.hpp"
#include "kernels/cuda/value_storage.hpp"

namespace tilesim_test::cuda_half {

namespace cuda = tilesim::kernels::cuda;

// The launcher's grid for `items`, and a small one (3 blocks of 32 threads) whose grid-stride loops wrap
// and whose emulated atomics run in another order.
inline std::vector<cuda::LaunchShape> grids_for(std::int64_t items) { return {cuda::launch_shape(items), cuda::launch_shape(items, 32, 3)}; }

// A tensor's values (already the dtype's, as convert_to_dtype leaves them) in storage S.
template <class S>
std::vector<typename S::type> held(const tilesim::TensorValues& values, tilesim::TensorId id) {
  return cuda::stored<S>(values.f32(id));
}

// An output buffer of n elements, each the dtype's NaN: an element the body never writes fails verify().
template <class S>
std::vector<typename S::type> unwritten(std::int64_t n) {
  return std::vector<typename S::type>(static_cast<std::size_t>(n), S::store(std::numeric_limits<float>::quiet_NaN()));
}

template <class S>
std::vector<typename S::type> unwritten_output(const tilesim::Op& op) {
  return unwritten<S>(op.output_rows() * op.output_cols());
}

// The output widened to float32: each element a value of the op's dtype, and verify() accepts it.
template <class S>
void expect_verified(const tilesim::Op& op, const tilesim::TensorValues& values, const std::vector<typename S::type>& out) {
  REQUIRE(op.dtype == S::dtype);
  const std::vector<float> widened = cuda::widened<S>(out);
  std::int64_t unrepresentable = 0;
  for (float x : widened) unrepresentable += tilesim::representable(op.dtype, x) ? 0 : 1;
  CHECK(unrepresentable == 0);
  const tilesim::reference::Verification v = tilesim::reference::verify(op, values, widened);
  INFO(v.detail);
  CHECK(v.ok);
}

}  // namespace tilesim_test::cuda_half
