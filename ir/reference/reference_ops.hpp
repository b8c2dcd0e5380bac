#pragma once
// References for the kernels beyond the op graph's gather and scatter-add: scatter mean/max, segment
// reduction, the fused gather-scale-scatter (SpMM), matmul, and the 16-bit storage formats. Each is
// computed in double, beside a per-element bound on how far a correct float32 result may lie from it
// (the rigorous bound of float32 summation in any order, plus the one rounding of a 16-bit store), so a
// check accepts every summation order and thread count yet catches a missing, doubled or misplaced term.
// Written independently of the kernels: nothing here includes kernels/cpu/row_ops.hpp or storage.hpp.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/reference/reference.hpp"

namespace tilesim::reference {

enum class Reduction { sum, mean, max };

struct Expected {
  std::vector<double> value;  // per output element
  std::vector<double> bound;  // |got - value| <= bound for a correct result
};

// Unit roundoff of a storage format's significand: 2^-24 float32, 2^-11 float16, 2^-8 bfloat16; the
// extra error of rounding a float32 result once into that format (0 for float32 itself).
double storage_rounding(const std::string& storage);

// src and x hold the values the kernel saw (16-bit inputs already widened to float).
Expected scatter_reduce(Reduction reduce, const std::vector<float>& src, std::int64_t num_features,
                        const std::vector<std::int32_t>& indices, std::int64_t num_outputs, double store_rounding);
Expected segment_reduce(Reduction reduce, const std::vector<float>& src, std::int64_t num_features,
                        const std::vector<std::int64_t>& offsets, double store_rounding);
Expected gather_scale_scatter(const std::vector<float>& x, std::int64_t num_features, const std::vector<std::int32_t>& src_nodes,
                              const std::vector<std::int32_t>& dst_nodes, const std::vector<float>& weights,
                              std::int64_t num_outputs, double store_rounding);
// c = a @ b (+ bias): a is m x k, b is k x n, row-major; bias empty or n values.
Expected matmul(const std::vector<float>& a, const std::vector<float>& b, std::int64_t m, std::int64_t k, std::int64_t n,
                const std::vector<float>& bias);

// Every element of `got` within its bound (NaN fails); the detail names the first that is not.
Verification check(const std::string& what, std::int64_t num_features, const std::vector<float>& got, const Expected& expected);

// IEEE binary16 and bfloat16 from first principles: the value a bit pattern stands for, and the
// nearest representable value to a float (ties to the even significand), found by searching the
// format's values rather than by bit manipulation.
double float16_value(std::uint16_t bits);
double bfloat16_value(std::uint16_t bits);
std::uint16_t nearest_float16(float x);
std::uint16_t nearest_bfloat16(float x);

}  // namespace tilesim::reference
