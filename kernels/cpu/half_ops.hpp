#pragma once
// The CPU backend's ops in a half dtype (float16, bfloat16): operands held in 16-bit storage, each value
// widened to float32 for the arithmetic and the result rounded once when stored, as ATen's CPU kernels
// do for half tensors (their "opmath" type is float). Matmuls run as 16-bit products accumulating in
// float32 (autocast's rule; kernels/cpu/matmul.hpp: AMX or AVX-512-BF16/FP16 where the CPU has them).
// Scatters accumulate in float32 and round each output element once, a tighter result than ATen's
// scatter_add_, which adds into the half output element by element (both lie within the reference's
// bound for the dtype, ir/reference/reference.hpp).
//
// A HalfOp converts its operands into 16-bit storage once, when made (the tensors a half model holds),
// so the timed run() reads and writes 2-byte values; output() widens the result for verification.
#include <cstdint>
#include <memory>
#include <vector>

#include "ir/op_graph.hpp"
#include "ir/operands.hpp"

namespace tilesim::kernels::cpu {

class HalfOp {
 public:
  // Throws std::invalid_argument for an op whose dtype is not float16 or bfloat16.
  HalfOp(const Op& op, const Operands& operands);
  ~HalfOp();
  HalfOp(const HalfOp&) = delete;
  HalfOp& operator=(const HalfOp&) = delete;

  // One call of the op on the 16-bit operands, into the 16-bit output (what is timed).
  void run();
  // The output of the last run(), widened to float32: output_elements(op) values.
  void output(float* out) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tilesim::kernels::cpu
