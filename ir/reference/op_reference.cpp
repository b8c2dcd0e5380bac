// The reference of every op kind (reference::expect / compute), computed in double from the float32
// operands, with the per-element bound each kind's check allows (see reference.hpp for the table).
#include <algorithm>
#include "ir/reference/roundoff.hpp"
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "ir/reference/reference.hpp"
#include "ir/reference/training_reference.hpp"

namespace tilesim::reference {
namespace {

// Subnormal float32 results carry absolute, not relative, error: a couple of the smallest steps.
constexpr double kSubnormalAbs = 0x1p-148;
constexpr double kPi = 3.14159265358979323846;
constexpr double kLog2 = 0.69314718055994530942;

using Index = std::int32_t;

std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(v); }

const std::vector<float>& need(const Op& op, const std::vector<float>* values, const char* role) {
  if (values == nullptr) throw std::invalid_argument("reference: op '" + op.name + "': its " + role + " operand is missing");
  return *values;
}

const std::vector<Index>& need(const Op& op, const std::vector<Index>* values, const char* role) {
  if (values == nullptr) throw std::invalid_argument("reference: op '" + op.name + "': its " + role + " operand is missing");
  return *values;
}

// The unit roundoff of the additions a scatter or count may make: float32's, or for a half dtype the
// dtype's own, since ATen's scatter_add_ / index_add_ (and the IPU's half multi-update-add) add into
// the half output element by element; a float32 accumulator rounded once at the store lies within it.
double accumulation_unit(const Op& op) { return is_half_dtype(op.dtype) ? unit_roundoff(op.dtype) : kU32; }

OpExpectation scatter_family(const Op& op, const Operands& o) {
  const std::int64_t F = op.shape.num_features;
  const double accumulation_u = accumulation_unit(op);
  const ScatterAddReference sum = scatter_add(need(op, o.input, "src"), F, need(op, o.indices, "indices"), op.shape.num_outputs);
  OpExpectation e;
  const std::size_t size = sum.sum.size();
  e.value.assign(size, 0.0);
  e.bound.assign(size, 0.0);
  e.terms_per_row.assign(sum.count_per_row.begin(), sum.count_per_row.end());
  std::vector<double> max;
  if (op.kind == OpKind::scatter_max) {
    max.assign(size, -INFINITY);
    const std::vector<float>& src = *o.input;
    const std::vector<Index>& idx = *o.indices;
    for (std::size_t i = 0; i < idx.size(); ++i)
      for (std::size_t f = 0; f < sz(F); ++f) {
        double& m = max[sz(idx[i]) * sz(F) + f];
        const double v = src[i * sz(F) + f];
        if (std::isnan(v) || v > m) m = std::isnan(m) ? m : v;  // a NaN message makes the row's max NaN
      }
  }
  for (std::size_t el = 0; el < size; ++el) {
    const double n = sum.count_per_row[el / sz(F)];
    if (n == 0) continue;  // rows nobody scatters to are exactly 0 for every reduction (PyG)
    const double sum_bound = ((n - 1) * accumulation_u + n * kU64) * sum.abs_sum[el] + kTinyAbs;
    switch (op.kind) {
      case OpKind::scatter_add: e.value[el] = sum.sum[el]; e.bound[el] = sum_bound; break;
      case OpKind::scatter_mean:
        e.value[el] = sum.sum[el] / n;
        e.bound[el] = sum_bound / n + 2 * accumulation_u * std::fabs(e.value[el]);
        break;
      default: e.value[el] = max[el]; break;  // a comparison: exact
    }
  }
  const std::string u = is_half_dtype(op.dtype) ? "u" : "2^-24";
  e.rule = op.kind == OpKind::scatter_add    ? "each element within (n - 1) * " + u + " * sum|terms|"
           : op.kind == OpKind::scatter_mean ? "each element within (n - 1) * " + u + " * sum|terms| / n + 2 " + u + " * |mean|"
                                             : "each element exactly the largest message (0 where none)";
  return e;
}

OpExpectation degree_count(const Op& op, const Operands& o) {
  const std::vector<Index>& idx = need(op, o.indices, "indices");
  OpExpectation e;
  e.value.assign(sz(op.shape.num_outputs), 0.0);
  e.bound.assign(e.value.size(), 0.0);
  for (std::size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || idx[i] >= op.shape.num_outputs)
      throw std::out_of_range("reference: op '" + op.name + "': indices[" + std::to_string(i) + "] = " + std::to_string(idx[i]) +
                              " is outside [0, " + std::to_string(op.shape.num_outputs) + ")");
    e.value[sz(idx[i])] += 1;
  }
  e.rule = "each count exact";
  if (is_half_dtype(op.dtype)) {
    // Counted by adding ones into a half output (PyG's degree in x's dtype): exact up to 2^11 (float16)
    // or 2^8 (bfloat16), then each addition may round.
    const double u = accumulation_unit(op);
    for (std::size_t r = 0; r < e.value.size(); ++r) e.bound[r] = std::max(0.0, e.value[r] - 1) * u * e.value[r];
    e.rule = "each count within (n - 1) * u * n (additions in the dtype)";
  }
  return e;
}

// One dot-product block: rows [row_begin, row_end) of a (m x k) times w (k x n), into e from row_begin.
// Row by row, accumulating a whole output row in double as p runs (w read along its rows), rows over
// OpenMP threads: the references of the large examples' linear layers stay a fraction of a second.
// `u`: the unit roundoff of the implementation's additions (dot_unit).
void dot_rows(const std::vector<float>& a, const float* w, std::int64_t k, std::int64_t n, std::int64_t row_begin,
              std::int64_t row_end, const std::vector<float>* bias, double u, OpExpectation& e) {
#pragma omp parallel for schedule(static) if ((row_end - row_begin) * k * n > (1 << 20))
  for (std::int64_t i = row_begin; i < row_end; ++i) {
    std::vector<double> sum(sz(n), 0.0), abs_sum(sz(n), 0.0);
    if (bias)
      for (std::int64_t j = 0; j < n; ++j) {
        sum[sz(j)] = (*bias)[sz(j)];
        abs_sum[sz(j)] = std::fabs(sum[sz(j)]);
      }
    for (std::int64_t p = 0; p < k; ++p) {
      const double a_ip = a[sz(i * k + p)];
      const float* w_p = w + p * n;
      for (std::int64_t j = 0; j < n; ++j) {
        const double term = a_ip * w_p[j];
        sum[sz(j)] += term;
        abs_sum[sz(j)] += std::fabs(term);
      }
    }
    for (std::int64_t j = 0; j < n; ++j) {
      const std::size_t el = sz(i * n + j);
      e.value[el] = sum[sz(j)];
      e.bound[el] = static_cast<double>(k + 1) * (u + kU64) * abs_sum[sz(j)] + kTinyAbs;
    }
  }
}

// A rows x cols row-major matrix transposed (the reference reads transposed operands through a copy).
std::vector<float> transposed(const std::vector<float>& a, std::int64_t rows, std::int64_t cols) {
  std::vector<float> t(a.size());
  if (static_cast<std::int64_t>(a.size()) != rows * cols) return t;  // the size check below reports it
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) t[sz(c * rows + r)] = a[sz(r * cols + c)];
  return t;
}

// The unit roundoff of a dot product's additions: float32's, or a half op's own dtype's where the
// implementation keeps partial sums in it (reference.hpp: Accumulation), and the words for the rule.
double dot_unit(const Op& op, const Accumulation& accumulation) {
  return accumulation.of(op.dtype) == DotAccumulation::in_dtype ? unit_roundoff(op.dtype) : kU32;
}
std::string dot_unit_text(const Op& op, const Accumulation& accumulation) {
  if (accumulation.of(op.dtype) == DotAccumulation::float32) return "2^-24";
  return std::string(op.dtype == DType::float16 ? "2^-11" : "2^-8") + " (partial sums in " + to_string(op.dtype) + ")";
}

OpExpectation matmul(const Op& op, const Operands& o, const Accumulation& accumulation) {
  const std::int64_t m = op.shape.num_inputs, k = op.shape.num_features, n = op.shape.out_features;
  std::vector<float> a_t, w_t;
  if (op.transpose_input) a_t = transposed(need(op, o.input, "input"), k, m);
  if (op.transpose_weight) w_t = transposed(need(op, o.weight, "weight"), n, k);
  const std::vector<float>& a = op.transpose_input ? a_t : need(op, o.input, "input");
  const std::vector<float>& w = op.transpose_weight ? w_t : need(op, o.weight, "weight");
  const std::vector<float>* bias = op.bias >= 0 ? &need(op, o.bias, "bias") : nullptr;
  if (static_cast<std::int64_t>(a.size()) != m * k || static_cast<std::int64_t>(w.size()) != k * n ||
      (bias && static_cast<std::int64_t>(bias->size()) != n))
    throw std::invalid_argument("reference: op '" + op.name + "': matmul operands do not match " + std::to_string(m) + " x " +
                                std::to_string(k) + " @ " + std::to_string(k) + " x " + std::to_string(n));
  OpExpectation e;
  e.value.assign(sz(m * n), 0.0);
  e.bound.assign(sz(m * n), 0.0);
  dot_rows(a, w.data(), k, n, 0, m, bias, dot_unit(op, accumulation), e);
  e.rule = "each element within (k + 1) * " + dot_unit_text(op, accumulation) + " * sum|products| (+|bias|)" +
           (op.transpose_input ? ", input transposed" : "") + (op.transpose_weight ? ", weight transposed" : "");
  return e;
}

OpExpectation segment_matmul(const Op& op, const Operands& o, const Accumulation& accumulation) {
  const double u = dot_unit(op, accumulation);
  const std::int64_t m = op.shape.num_inputs, k = op.shape.num_features, n = op.shape.out_features, segments = op.shape.num_segments;
  const std::vector<float>& a = need(op, o.input, "input");
  const std::vector<float>& w = need(op, o.weight, "weight");
  const std::vector<Index>& offsets = need(op, o.indices, "offsets");
  if (static_cast<std::int64_t>(a.size()) != m * k ||
      static_cast<std::int64_t>(w.size()) != (op.transpose_input ? m * n : segments * k * n) ||
      static_cast<std::int64_t>(offsets.size()) != segments + 1)
    throw std::invalid_argument("reference: op '" + op.name + "': segment_matmul operands do not match its shape");
  if (offsets.front() != 0 || offsets.back() != m)
    throw std::invalid_argument("reference: op '" + op.name + "': offsets must run from 0 to num_inputs " + std::to_string(m));
  for (std::int64_t s = 0; s < segments; ++s)
    if (offsets[sz(s + 1)] < offsets[sz(s)])
      throw std::invalid_argument("reference: op '" + op.name + "': offsets decrease at " + std::to_string(s + 1));
  OpExpectation e;
  if (op.transpose_input) {  // out[s] = a_s^T @ g_s: K x N dot products of length M_s down the segment's rows
    e.value.assign(sz(segments * k * n), 0.0);
    e.bound.assign(e.value.size(), 0.0);
#pragma omp parallel for schedule(static) if (m * k * n > (1 << 20))
    for (std::int64_t s = 0; s < segments; ++s) {
      const std::int64_t begin = offsets[sz(s)], end = offsets[sz(s + 1)];
      std::vector<double> sum(sz(k * n), 0.0), abs_sum(sz(k * n), 0.0);
      for (std::int64_t r = begin; r < end; ++r)
        for (std::int64_t p = 0; p < k; ++p) {
          const double a_rp = a[sz(r * k + p)];
          for (std::int64_t j = 0; j < n; ++j) {
            const double term = a_rp * w[sz(r * n + j)];
            sum[sz(p * n + j)] += term;
            abs_sum[sz(p * n + j)] += std::fabs(term);
          }
        }
      for (std::int64_t el = 0; el < k * n; ++el) {
        e.value[sz(s * k * n + el)] = sum[sz(el)];
        e.bound[sz(s * k * n + el)] = static_cast<double>(end - begin + 1) * (u + kU64) * abs_sum[sz(el)] + kTinyAbs;
      }
    }
    e.rule = "each element within (rows + 1) * " + dot_unit_text(op, accumulation) +
             " * sum|products| for its segment's rows, input transposed (an empty segment's exactly 0)";
    return e;
  }
  e.value.assign(sz(m * n), 0.0);
  e.bound.assign(sz(m * n), 0.0);
  std::vector<float> w_t;  // transpose_weight: each segment's [n, k] read as [k, n]
  if (op.transpose_weight) {
    w_t.resize(w.size());
    for (std::int64_t s = 0; s < segments; ++s) {
      const std::vector<float> block(w.begin() + s * k * n, w.begin() + (s + 1) * k * n);
      const std::vector<float> t = transposed(block, n, k);
      std::copy(t.begin(), t.end(), w_t.begin() + s * k * n);
    }
  }
  const float* wd = op.transpose_weight ? w_t.data() : w.data();
  for (std::int64_t s = 0; s < segments; ++s) dot_rows(a, wd + s * k * n, k, n, offsets[sz(s)], offsets[sz(s + 1)], nullptr, u, e);
  e.rule = "each element within (k + 1) * " + dot_unit_text(op, accumulation) + " * sum|products| with its segment's weight" +
           (op.transpose_weight ? ", weight transposed" : "");
  return e;
}

// The exact value of f(x) and how far a correct float32 implementation may be from it.
struct Elementwise {
  double value;
  double bound;
};

Elementwise unary_value(UnaryFn fn, double s, double x) {
  switch (fn) {
    case UnaryFn::relu: return {x > 0 ? x : 0.0, 0.0};
    case UnaryFn::leaky_relu: {
      const double v = x >= 0 ? x : static_cast<double>(static_cast<float>(s)) * x;
      return {v, kU32 * std::fabs(v)};  // one rounded multiply
    }
    case UnaryFn::scale: {
      const double v = s * x;
      return {v, kU32 * std::fabs(v)};
    }
    case UnaryFn::exp: {
      // libm's expf and vectorised exp (SLEEF in ATen, polynomials in our kernels) are within a few ulp:
      // 4 ulp = 8u relative.
      const double v = std::exp(x);
      return {v, 8 * kU32 * v};
    }
    case UnaryFn::shifted_softplus: {
      // log(1 + e^x) - log 2, as PyG computes it: softplus (within 4 ulp, and = x above torch's threshold
      // 20, an error of e^-20 relative) then subtract a rounded log 2: 8u (|softplus| + log 2) covers both.
      const double softplus = x > 30 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
      return {softplus - kLog2, 8 * kU32 * (softplus + kLog2)};
    }
    case UnaryFn::softplus: {
      // torch's softplus (beta 1, threshold 20): log1p(exp(x)), x itself above 20 (an error of e^-20
      // relative): within 4 ulp.
      const double softplus = x > 20 ? x : std::log1p(std::exp(x));
      return {softplus, 8 * kU32 * softplus};
    }
    case UnaryFn::sqrt: {
      const double v = std::sqrt(x);  // NaN below 0, as torch.sqrt
      return {v, kU32 * std::fabs(v)};  // correctly rounded
    }
    case UnaryFn::log: {
      const double v = std::log(x);  // -inf at 0, NaN below
      return {v, 4 * kU32 * std::fabs(v)};  // within 2 ulp
    }
    case UnaryFn::clamp_min: {
      const double m = static_cast<double>(static_cast<float>(s));
      return {std::isnan(x) || !(x < m) ? x : m, 0.0};  // max(x, min), NaN kept as torch keeps it
    }
    case UnaryFn::sigmoid: {
      // 1 / (1 + e^-x): exp within 4 ulp, the add and the divide round once each.
      const double v = 1.0 / (1.0 + std::exp(-x));
      return {v, 8 * kU32 * v};
    }
    case UnaryFn::rsqrt_or_zero: {
      if (!(x > 0)) return {0.0, 0.0};
      const double v = 1.0 / std::sqrt(x);
      return {v, 4 * kU32 * v};  // pow(x, -0.5) or 1/sqrt: within 2 ulp
    }
    case UnaryFn::reciprocal_or_zero: {
      if (x == 0) return {0.0, 0.0};
      const double v = 1.0 / x;
      return {v, 2 * kU32 * std::fabs(v)};
    }
    case UnaryFn::cosine_cutoff: {
      if (!(x < s)) return {0.0, 0.0};
      // The argument pi x / c picks up ~3 roundings (3u |arg|), cos moves at most half as much after the
      // 0.5 factor, cos itself errs a few ulp of 1 and the + 1 and * 0.5 round once each: u (2 |arg| + 4).
      const double arg = kPi * x / s;
      return {0.5 * (std::cos(arg) + 1.0), kU32 * (2 * std::fabs(arg) + 4)};
    }
  }
  throw std::logic_error("reference: unknown unary function");
}

OpExpectation unary(const Op& op, const Operands& o) {
  const std::vector<float>& x = need(op, o.input, "input");
  if (static_cast<std::int64_t>(x.size()) != op.shape.num_inputs * op.shape.num_features)
    throw std::invalid_argument("reference: op '" + op.name + "': input does not match its shape");
  OpExpectation e;
  e.value.resize(x.size());
  e.bound.resize(x.size());
  // In a half dtype the two functions PyG composes of several ATen calls (softplus then the shift; the
  // cutoff's multiply, cos, add and scale) round in the dtype at every step: the float32 bound with the
  // dtype's unit roundoff in place of 2^-24 covers them (and the one store adds its rounding after).
  // The others are one ATen call each: computed in float32, rounded once at the store.
  const bool composite = op.unary == UnaryFn::shifted_softplus || op.unary == UnaryFn::cosine_cutoff;
  const double unit_scale = is_half_dtype(op.dtype) && composite ? unit_roundoff(op.dtype) / kU32 : 1.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const Elementwise r = unary_value(op.unary, op.scalar, x[i]);
    e.value[i] = r.value;
    e.bound[i] = r.bound * unit_scale + kSubnormalAbs;
  }
  switch (op.unary) {
    case UnaryFn::relu: e.rule = "each element exact"; break;
    case UnaryFn::leaky_relu:
    case UnaryFn::scale: e.rule = "each element within 2^-24 |value| (one rounded multiply)"; break;
    case UnaryFn::exp: e.rule = "each element within 4 ulp (2^-21 |value|)"; break;
    case UnaryFn::shifted_softplus: e.rule = "each element within 2^-21 (softplus + log 2)"; break;
    case UnaryFn::rsqrt_or_zero: e.rule = "each element within 2 ulp (2^-22 |value|), 0 where x <= 0"; break;
    case UnaryFn::reciprocal_or_zero: e.rule = "each element within 1 ulp (2^-23 |value|), 0 where x = 0"; break;
    case UnaryFn::cosine_cutoff: e.rule = "each element within 2^-24 (2 |pi x / cutoff| + 4), 0 from the cutoff on"; break;
    case UnaryFn::sigmoid: e.rule = "each element within 2^-21 |value|"; break;
    case UnaryFn::sqrt: e.rule = "each element within 2^-24 |value| (correctly rounded; NaN below 0)"; break;
    case UnaryFn::log: e.rule = "each element within 2 ulp (2^-22 |value|; -inf at 0, NaN below)"; break;
    case UnaryFn::clamp_min: e.rule = "each element exact"; break;
    case UnaryFn::softplus: e.rule = "each element within 2^-21 |value| (x itself above 20, torch's threshold)"; break;
  }
  if (unit_scale != 1.0) e.rule += " with the dtype's unit roundoff in place of 2^-24 (each step may round in it)";
  return e;
}

OpExpectation binary(const Op& op, const Operands& o) {
  const OpShape& s = op.shape;
  const std::vector<float>& x = need(op, o.input, "input");
  const std::vector<float>& other = need(op, o.binary_other(), "other");
  if (static_cast<std::int64_t>(x.size()) != s.num_inputs * s.num_features || s.other_groups <= 0 ||
      s.num_features % s.other_groups != 0 || (s.other_rows != 1 && s.other_rows != s.num_inputs) ||
      static_cast<std::int64_t>(other.size()) != s.other_rows * s.other_groups)
    throw std::invalid_argument("reference: op '" + op.name + "': binary operands do not match its shape");
  const std::int64_t per_group = s.num_features / s.other_groups;
  const double rounding = op.binary == BinaryFn::divide ? 2 * kU32 : kU32;  // divide may be a multiply by 1/y
  OpExpectation e;
  e.value.resize(x.size());
  e.bound.resize(x.size());
  for (std::int64_t r = 0; r < s.num_inputs; ++r)
    for (std::int64_t c = 0; c < s.num_features; ++c) {
      const std::size_t el = sz(r * s.num_features + c);
      const double a = x[el];
      const double b = other[sz((s.other_rows == 1 ? 0 : r) * s.other_groups + c / per_group)];
      double v = 0;
      switch (op.binary) {
        case BinaryFn::add: v = a + b; break;
        case BinaryFn::subtract: v = a - b; break;
        case BinaryFn::multiply: v = a * b; break;
        case BinaryFn::divide: v = a / b; break;
        case BinaryFn::equal: v = a == b ? 1.0 : 0.0; break;
      }
      e.value[el] = v;
      e.bound[el] = op.binary == BinaryFn::equal ? 0.0 : rounding * std::fabs(v) + kSubnormalAbs;
    }
  e.rule = std::string("other broadcast as ") + std::to_string(s.other_rows) + " x " + std::to_string(s.other_groups) +
           (op.binary == BinaryFn::equal ? ", each element exact (1 or 0)"
                                         : std::string(", each element within ") + (op.binary == BinaryFn::divide ? "2^-23" : "2^-24") + " |value|");
  return e;
}

// A cast (ir/op_graph.hpp): the input, read in its own dtype, times the scale, rounded once into the
// output dtype. Every implementation multiplies in float32 (a float times a float: IEEE's correctly
// rounded product, exact for a power-of-two scale) and stores that once, so there is one correct result
// per element: the float32 product rounded to nearest even into the dtype (correctly_rounded: verify
// accepts that value alone, so a conversion that truncates, flushes a subnormal or rounds twice fails).
// The bound, a float32 rounding of the product plus the store's, serves the cross-backend comparisons.
OpExpectation cast(const Op& op, const Operands& o) {
  const std::vector<float>& x = need(op, o.input, "input");
  if (static_cast<std::int64_t>(x.size()) != op.shape.num_inputs * op.shape.num_features)
    throw std::invalid_argument("reference: op '" + op.name + "': input does not match its shape");
  const double scale = op.cast_scale();
  const double u = op.dtype == DType::float32 ? 0.0 : unit_roundoff(op.dtype);
  const double tiny = subnormal_half_step(op.dtype);
  OpExpectation e;
  e.correctly_rounded = true;
  e.value.resize(x.size());
  e.bound.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    e.value[i] = scale * x[i];  // exact in double: two floats' product
    e.bound[i] = (kU32 + u) * std::fabs(e.value[i]) + tiny;
  }
  char scale_text[32];
  std::snprintf(scale_text, sizeof scale_text, "%.9g", scale);
  e.rule = to_string(op.input_dtype) + " -> " + to_string(op.dtype) + (scale != 1 ? std::string(" times ") + scale_text : std::string()) +
           ", each element exactly the float32 product rounded once to " + to_string(op.dtype);
  return e;
}

// A half dtype's store: a result computed in float32 (matmuls accumulate in float32, as autocast and
// the IPU's AMP do; elementwise ops compute in float32, as ATen's opmath does) is rounded once into the
// dtype, which moves it by up to u |value| (or half a subnormal step). Exact kinds stay exact: their
// results are operand values, or counts, which degree_count bounds itself.
void add_store_rounding(const Op& op, OpExpectation& e) {
  const bool exact = op.kind == OpKind::scatter_max || op.kind == OpKind::degree_count ||
                     (op.kind == OpKind::unary && op.unary == UnaryFn::relu) ||
                     (op.kind == OpKind::binary && op.binary == BinaryFn::equal);
  if (exact) return;
  const double u = unit_roundoff(op.dtype), tiny = subnormal_half_step(op.dtype);
  for (std::size_t el = 0; el < e.value.size(); ++el) e.bound[el] += u * std::fabs(e.value[el]) + tiny;
  e.rule += std::string(", plus one rounding to ") + to_string(op.dtype) + " (u = " + (op.dtype == DType::float16 ? "2^-11" : "2^-8") +
            ") of |value|";
}

OpExpectation expect_float32(const Op& op, const Operands& operands, const Accumulation& accumulation);

}  // namespace

OpExpectation expect(const Op& op, const Operands& operands, const Accumulation& accumulation) {
  if (!is_value_dtype(op.dtype))
    throw std::invalid_argument("reference: op '" + op.name + "': no reference for dtype " + to_string(op.dtype));
  OpExpectation e = expect_float32(op, operands, accumulation);
  // A cast's expectation holds its own store rounding.
  if (is_half_dtype(op.dtype) && !e.bitwise && op.kind != OpKind::cast) add_store_rounding(op, e);
  return e;
}

namespace {

// The expectation of a float32 computation (for a half dtype: of its float32 part, the accumulations
// of scatters and counts already in the dtype, and of dot products where `accumulation` says so).
OpExpectation expect_float32(const Op& op, const Operands& operands, const Accumulation& accumulation) {
  switch (op.kind) {
    case OpKind::gather: {
      OpExpectation e;
      e.bitwise = true;
      e.copy = gather(need(op, operands.input, "table"), op.shape.num_features, need(op, operands.indices, "indices"));
      e.rule = "compared bitwise with the reference copy";
      return e;
    }
    case OpKind::scatter_add:
    case OpKind::scatter_mean:
    case OpKind::scatter_max: return scatter_family(op, operands);
    case OpKind::degree_count: return degree_count(op, operands);
    case OpKind::matmul: return matmul(op, operands, accumulation);
    case OpKind::segment_matmul: return segment_matmul(op, operands, accumulation);
    case OpKind::unary: return unary(op, operands);
    case OpKind::binary: return binary(op, operands);
    case OpKind::unary_grad: return training::unary_grad(op, operands);
    case OpKind::sum_to: return training::sum_to(op, operands);
    case OpKind::loss: return training::loss(op, operands);
    case OpKind::loss_grad: return training::loss_grad(op, operands);
    case OpKind::optimizer_step: return training::optimizer_step(op, operands);
    case OpKind::cast: return cast(op, operands);
  }
  throw std::logic_error("reference: unknown op kind");
}

}  // namespace

double unary_exact(UnaryFn fn, double scalar, double x) { return unary_value(fn, scalar, x).value; }

std::vector<float> compute(const Op& op, const Operands& operands) {
  OpExpectation e = expect(op, operands);
  if (e.bitwise) return std::move(e.copy);
  std::vector<float> out(e.value.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = round_to(op.dtype, static_cast<float>(e.value[i]));
  return out;
}

std::vector<float> compute(const Op& op, const TensorValues& values) { return compute(op, resolve_operands(op, values)); }

}  // namespace tilesim::reference
