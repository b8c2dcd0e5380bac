#pragma once
// Simple, obviously-correct reference implementations of every op kind of the op graph, and the check
// every backend's outputs go through. Values are computed in double from the float32 operands; an output
// passes when each element lies within a bound of that value chosen per kind so that any correct
// float32 implementation (any summation order, thread count, blocking or vector width) passes and a
// missing, doubled or misplaced term fails:
//   gather                    bitwise (a copy: -0, NaN payloads and every rounding come through unchanged)
//   degree_count, scatter_max exact (a count below 2^24, a comparison); +0 and -0 count as the same max
//   scatter_add               (n - 1) u sum|terms| for n terms, u = 2^-24 (any order of float32
//                             additions, Jeannerod & Rump 2013), plus the double reference's n 2^-53 sum|terms|
//   scatter_mean              that bound / n, plus 2u |mean| (a divide, or a multiply by a rounded 1/n)
//   matmul, segment_matmul    (k + 1) u sum|a_ip b_pj| (+|bias|) for k products (dot products in any order,
//                             with or without FMA), plus the double reference's error; segment_matmul
//                             with transpose_input (a weight's gradient) the same with k the segment's rows.
//                             u is float32's unless the implementation keeps a half op's partial sums in
//                             the op's dtype (Accumulation below): then that dtype's
//   unary, binary             see unary_bound_text / the .cpp: one rounding (u |v|) for the correctly
//                             rounded ones (multiply, add, scale, leaky_relu), 2u for divide and
//                             reciprocal, a stated few-ulp bound for the library functions exp, softplus,
//                             cos and rsqrt; relu exact
//   cast                      exactly: the float32 product input * scale (IEEE-rounded; exact for a power-of-two
//                             scale) rounded once to the output dtype (OpExpectation::correctly_rounded)
// Every element also passes when it equals the reference rounded to float32 (so an infinity the exact
// value overflows to passes), or when both are NaN; elementwise bounds add 2^-148 absolute for
// subnormal results.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/op_graph.hpp"
#include "ir/operands.hpp"
#include "ir/tensor_values.hpp"

namespace tilesim::reference {

// How an implementation accumulates the dot products of a half-dtype matmul. Libraries do not all say,
// and the answer can change with the host's CPU: libtorch 1.13 hands a bfloat16 mm to oneDNN (float32
// accumulators) where the CPU has AVX-512 BW/VL/DQ, and otherwise to its own gemm, which keeps the partial
// sums of mm(a, b) in bfloat16. A backend that cannot vouch for float32 accumulators finds out (the
// torch-cpu peer probes at start-up: kernels/torch/accumulation_probe.hpp) and verification then allows
// the dtype's unit roundoff per addition instead of float32's.
enum class DotAccumulation {
  float32,   // products and partial sums in float32 (or wider), one rounding to the dtype at the store
  in_dtype,  // partial sums may be rounded to the op's own dtype along the way
};
std::string to_string(DotAccumulation accumulation);

struct Accumulation {
  DotAccumulation float16 = DotAccumulation::float32;
  DotAccumulation bfloat16 = DotAccumulation::float32;
  // The accumulation of an op of `dtype` (float32 ops always accumulate in float32).
  DotAccumulation of(DType dtype) const;
};

std::vector<float> gather(const std::vector<float>& table, std::int64_t num_features, const std::vector<std::int32_t>& indices);

struct ScatterAddReference {
  std::vector<double> sum;       // exact-ish sum per output element
  std::vector<double> abs_sum;   // sum of |terms| per output element
  std::vector<std::int32_t> count_per_row;  // terms per output row
};
ScatterAddReference scatter_add(const std::vector<float>& src, std::int64_t num_features,
                                const std::vector<std::int32_t>& indices, std::int64_t num_outputs);

// What a correct output of one op is: per element the value (double) and how far a float32 result may lie
// from it.
struct OpExpectation {
  std::vector<double> value;
  std::vector<double> bound;
  bool bitwise = false;                     // gather: compare the bits of the float32 copy instead
  std::vector<float> copy;                  // gather: the float32 values copied, for the bitwise check
  std::vector<std::int64_t> terms_per_row;  // scatter family: messages per output row (else empty)
  // cast: verify accepts each element only as the value rounded through float32 into the op's dtype
  // (round_to(dtype, float(value))), the one result a correct conversion stores; `bound` then serves
  // the cross-backend comparisons (compare.hpp), whose operands may round to either side of a tie.
  bool correctly_rounded = false;
  std::string rule;                         // the tolerance in words, for the verification text
};

// The reference of any op kind from its operand values (ir/operands.hpp). Throws
// std::invalid_argument for operands that do not match the op's shape, std::out_of_range for an index
// outside its range, and for a dtype other than float32.
// `accumulation` says how the implementation checked adds up a half matmul's dot products (default:
// in float32).
OpExpectation expect(const Op& op, const Operands& operands, const Accumulation& accumulation = {});
// The op's output as the reference computes it: row-major, output_rows() x output_cols(), each element
// the double-precision value rounded once to float32 (gather: the exact copy).
std::vector<float> compute(const Op& op, const Operands& operands);
std::vector<float> compute(const Op& op, const TensorValues& values);  // operands all in `values`
// The exact (double-precision) value of a unary function at x, as the reference defines it (`scalar`:
// the leaky slope, scale factor or cutoff). The simulated IPU's vertices round it once to float32.
double unary_exact(UnaryFn fn, double scalar, double x);

struct Verification {
  bool ok = false;
  std::int64_t mismatches = 0;
  std::string detail;   // what was checked, and the first mismatch if any
};

// Checks one op's output against the reference computed from its operands. A wrong output size is a
// failed verification (every element counted as a mismatch), not an exception.
// `accumulation`: how the implementation accumulates half matmuls (see Accumulation).
Verification verify(const Op& op, const Operands& operands, const std::vector<float>& output,
                    const Accumulation& accumulation = {});
// The same with every operand in `values` (graph inputs, or inputs and earlier outputs together).
Verification verify(const Op& op, const TensorValues& values, const std::vector<float>& output,
                    const Accumulation& accumulation = {});

}  // namespace tilesim::reference
