#pragma once
// The cast op (ir/op_graph.hpp): out = round_to(out dtype, scale * in) between any two of float32,
// float16 and bfloat16, as a mixed-precision training step makes them (its float32 master weights cast to
// the model's half dtype, the half predictions to float32 for the loss, the scaled loss gradient to half,
// each half gradient back to float32 and unscaled). One streaming pass in cache-sized chunks: a chunk of
// the input widened to float32 (exact), scaled (exact for a power of two), rounded once into the output's
// storage, through the row conversions the whole-array ones use (storage_convert.hpp, row_ops.hpp).
//
// The input is held in its own dtype (the graph tensor's: Op::input_dtype), the output in the op's, so
// the timed run() reads and writes the bytes a mixed-precision model moves.
#include <memory>

#include "ir/op_graph.hpp"
#include "ir/operands.hpp"

namespace tilesim::kernels::cpu {

class CastOp {
 public:
  // Throws std::invalid_argument for an op that is not a cast or a dtype that is not a value dtype.
  CastOp(const Op& op, const Operands& operands);
  ~CastOp();
  CastOp(const CastOp&) = delete;
  CastOp& operator=(const CastOp&) = delete;

  // One call: the whole input into the output (what is timed).
  void run();
  // The output of the last run(), widened to float32: output_elements(op) values.
  void output(float* out) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tilesim::kernels::cpu
