#include "ir/reference/reference_ops.hpp"
#include "ir/reference/roundoff.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace tilesim::reference {
namespace {


void check_index(std::int32_t index, std::size_t position, std::int64_t range, const char* what) {
  if (index < 0 || index >= range)
    throw std::out_of_range(std::string(what) + ": index " + std::to_string(index) + " at position " + std::to_string(position) +
                            " is outside [0, " + std::to_string(range) + ")");
}

// Positive finite values of a 16-bit format in increasing order of bits (= of value), for the search.
std::vector<double> positive_values(double (*value_of)(std::uint16_t)) {
  std::vector<double> values;
  for (std::uint32_t b = 0; b < 0x8000u; ++b) {
    const double v = value_of(static_cast<std::uint16_t>(b));
    if (!std::isfinite(v)) break;  // the exponent-all-ones patterns come last
    values.push_back(v);
  }
  return values;
}

// Nearest of a format's values to x, ties to the even pattern; beyond the largest finite value by half
// an ulp or more, infinity. NaN gives the format's quiet NaN with x's sign.
std::uint16_t nearest(float x, const std::vector<double>& values, std::uint16_t infinity_bits, std::uint16_t nan_bits) {
  const std::uint16_t sign = std::signbit(x) ? 0x8000u : 0u;
  if (std::isnan(x)) return sign | nan_bits;
  const double magnitude = std::fabs(static_cast<double>(x));
  const double largest = values.back();
  const double ulp_at_top = largest - values[values.size() - 2];
  if (magnitude >= largest + ulp_at_top / 2) return sign | infinity_bits;
  const auto above = std::lower_bound(values.begin(), values.end(), magnitude);
  if (above == values.end()) return sign | static_cast<std::uint16_t>(values.size() - 1);
  const auto hi = static_cast<std::uint16_t>(above - values.begin());
  if (*above == magnitude || hi == 0) return sign | hi;
  const std::uint16_t lo = hi - 1;
  const double below_distance = magnitude - values[lo], above_distance = *above - magnitude;
  if (below_distance < above_distance) return sign | lo;
  if (above_distance < below_distance) return sign | hi;
  return sign | ((lo & 1u) == 0 ? lo : hi);
}

void check_shape(std::size_t values, std::int64_t num_features, const char* what) {
  if (num_features <= 0 || static_cast<std::int64_t>(values) % num_features != 0)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(values) + " values is not a whole number of rows of " +
                                std::to_string(num_features));
}

}  // namespace

double storage_rounding(const std::string& storage) {
  if (storage == "float32") return 0.0;
  if (storage == "float16") return 0x1p-11;
  if (storage == "bfloat16") return 0x1p-8;
  throw std::invalid_argument("storage_rounding: unknown storage " + storage);
}

Expected scatter_reduce(Reduction reduce, const std::vector<float>& src, std::int64_t num_features,
                        const std::vector<std::int32_t>& indices, std::int64_t num_outputs, double store_rounding) {
  check_shape(src.size(), num_features, "reference::scatter_reduce");
  if (src.size() / static_cast<std::size_t>(num_features) != indices.size())
    throw std::invalid_argument("reference::scatter_reduce: message rows and indices differ in number");
  const auto F = static_cast<std::size_t>(num_features);
  const std::size_t out_size = static_cast<std::size_t>(num_outputs) * F;
  std::vector<double> sum(out_size, 0.0), abs_sum(out_size, 0.0);
  std::vector<double> max(out_size, -std::numeric_limits<double>::infinity());
  std::vector<std::int64_t> count(static_cast<std::size_t>(num_outputs), 0);
  for (std::size_t i = 0; i < indices.size(); ++i) {
    check_index(indices[i], i, num_outputs, "reference::scatter_reduce");
    const auto r = static_cast<std::size_t>(indices[i]);
    ++count[r];
    for (std::size_t f = 0; f < F; ++f) {
      const double x = src[i * F + f];
      sum[r * F + f] += x;
      abs_sum[r * F + f] += std::fabs(x);
      max[r * F + f] = std::max(max[r * F + f], x);
    }
  }
  Expected e;
  e.value.resize(out_size);
  e.bound.resize(out_size);
  for (std::size_t el = 0; el < out_size; ++el) {
    const auto n = static_cast<double>(count[el / F]);
    double value = 0, bound = 0;
    if (n > 0) {
      // n - 1 float32 additions in any order: (n - 1) u sum|x|; the double reference: n 2^-53 sum|x|.
      const double sum_bound = ((n - 1) * kU32 + n * kU64) * abs_sum[el];
      switch (reduce) {
        case Reduction::sum: value = sum[el]; bound = sum_bound; break;
        // The division by n rounds once more (u |mean|).
        case Reduction::mean: value = sum[el] / n; bound = sum_bound / n + kU32 * std::fabs(value); break;
        case Reduction::max: value = max[el]; bound = 0; break;  // a comparison: exact
      }
    }
    e.value[el] = value;
    e.bound[el] = bound + store_rounding * std::fabs(value) + kTinyAbs;
  }
  return e;
}

Expected segment_reduce(Reduction reduce, const std::vector<float>& src, std::int64_t num_features,
                        const std::vector<std::int64_t>& offsets, double store_rounding) {
  if (offsets.empty() || offsets.front() != 0) throw std::invalid_argument("reference::segment_reduce: offsets must start at 0");
  std::vector<std::int32_t> indices;
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
    if (offsets[s + 1] < offsets[s]) throw std::invalid_argument("reference::segment_reduce: offsets decrease at " + std::to_string(s));
    for (std::int64_t m = offsets[s]; m < offsets[s + 1]; ++m) indices.push_back(static_cast<std::int32_t>(s));
  }
  return scatter_reduce(reduce, src, num_features, indices, static_cast<std::int64_t>(offsets.size()) - 1, store_rounding);
}

Expected gather_scale_scatter(const std::vector<float>& x, std::int64_t num_features, const std::vector<std::int32_t>& src_nodes,
                              const std::vector<std::int32_t>& dst_nodes, const std::vector<float>& weights,
                              std::int64_t num_outputs, double store_rounding) {
  check_shape(x.size(), num_features, "reference::gather_scale_scatter");
  if (src_nodes.size() != dst_nodes.size() || weights.size() != dst_nodes.size())
    throw std::invalid_argument("reference::gather_scale_scatter: src_nodes, dst_nodes and weights differ in length");
  const auto F = static_cast<std::size_t>(num_features);
  const std::int64_t num_nodes = static_cast<std::int64_t>(x.size() / F);
  const std::size_t out_size = static_cast<std::size_t>(num_outputs) * F;
  std::vector<double> sum(out_size, 0.0), abs_sum(out_size, 0.0);
  std::vector<std::int64_t> count(static_cast<std::size_t>(num_outputs), 0);
  for (std::size_t e = 0; e < dst_nodes.size(); ++e) {
    check_index(src_nodes[e], e, num_nodes, "reference::gather_scale_scatter (source)");
    check_index(dst_nodes[e], e, num_outputs, "reference::gather_scale_scatter (destination)");
    const auto d = static_cast<std::size_t>(dst_nodes[e]);
    const auto s = static_cast<std::size_t>(src_nodes[e]);
    ++count[d];
    for (std::size_t f = 0; f < F; ++f) {
      const double term = static_cast<double>(weights[e]) * x[s * F + f];
      sum[d * F + f] += term;
      abs_sum[d * F + f] += std::fabs(term);
    }
  }
  Expected out;
  out.value = sum;
  out.bound.resize(out_size);
  for (std::size_t el = 0; el < out_size; ++el) {
    const auto n = static_cast<double>(count[el / F]);
    // Each product rounds once (u |term|) before n - 1 additions: n u sum|terms| covers both.
    out.bound[el] = (n * kU32 + n * kU64) * abs_sum[el] + store_rounding * std::fabs(sum[el]) + kTinyAbs;
  }
  return out;
}

Expected matmul(const std::vector<float>& a, const std::vector<float>& b, std::int64_t m, std::int64_t k, std::int64_t n,
                const std::vector<float>& bias) {
  if (static_cast<std::int64_t>(a.size()) != m * k || static_cast<std::int64_t>(b.size()) != k * n ||
      !(bias.empty() || static_cast<std::int64_t>(bias.size()) == n))
    throw std::invalid_argument("reference::matmul: operand sizes do not match m, k, n");
  Expected e;
  const auto out_size = static_cast<std::size_t>(m * n);
  e.value.assign(out_size, 0.0);
  e.bound.assign(out_size, 0.0);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = bias.empty() ? 0.0 : bias[static_cast<std::size_t>(j)];
      double abs_sum = std::fabs(sum);
      for (std::int64_t p = 0; p < k; ++p) {
        const double term = static_cast<double>(a[static_cast<std::size_t>(i * k + p)]) * b[static_cast<std::size_t>(p * n + j)];
        sum += term;
        abs_sum += std::fabs(term);
      }
      const auto el = static_cast<std::size_t>(i * n + j);
      e.value[el] = sum;
      // k products and k additions (the bias included), blocked or fused in any way: (k + 1) u sum|terms|.
      e.bound[el] = (static_cast<double>(k + 1) * kU32 + static_cast<double>(k + 1) * kU64) * abs_sum + kTinyAbs;
    }
  }
  return e;
}

Verification check(const std::string& what, std::int64_t num_features, const std::vector<float>& got, const Expected& expected) {
  Verification v;
  if (got.size() != expected.value.size()) {
    v.mismatches = static_cast<std::int64_t>(expected.value.size());
    v.detail = what + ": output has " + std::to_string(got.size()) + " elements, expected " + std::to_string(expected.value.size());
    return v;
  }
  std::string first;
  for (std::size_t e = 0; e < got.size(); ++e) {
    const double error = std::fabs(static_cast<double>(got[e]) - expected.value[e]);
    if (error <= expected.bound[e]) continue;  // false for NaN
    if (v.mismatches++ == 0)
      first = "row " + std::to_string(e / static_cast<std::size_t>(num_features)) + ", column " +
              std::to_string(e % static_cast<std::size_t>(num_features)) + ": got " + format_value(got[e]) + ", expected " +
              format_value(expected.value[e]) + " within " + format_value(expected.bound[e]);
  }
  v.ok = v.mismatches == 0;
  v.detail = what + ": " + (v.ok ? "all " + std::to_string(got.size()) + " elements within their bounds"
                                 : std::to_string(v.mismatches) + " elements outside their bounds; first at " + first);
  return v;
}

double float16_value(std::uint16_t bits) {
  const double sign = (bits & 0x8000u) ? -1.0 : 1.0;
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  if (exponent == 0x1F) return mantissa ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

double bfloat16_value(std::uint16_t bits) {
  const double sign = (bits & 0x8000u) ? -1.0 : 1.0;
  const int exponent = (bits >> 7) & 0xFF;
  const int mantissa = bits & 0x7F;
  if (exponent == 0xFF) return mantissa ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0) return sign * std::ldexp(mantissa, -133);
  return sign * std::ldexp(128 + mantissa, exponent - 134);
}

std::uint16_t nearest_float16(float x) {
  static const std::vector<double> values = positive_values(float16_value);
  return nearest(x, values, 0x7C00u, 0x7E00u);
}

std::uint16_t nearest_bfloat16(float x) {
  static const std::vector<double> values = positive_values(bfloat16_value);
  return nearest(x, values, 0x7F80u, 0x7FC0u);
}

}  // namespace tilesim::reference
