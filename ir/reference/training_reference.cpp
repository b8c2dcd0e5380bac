// References of the training op kinds. Each bound is the sum of the roundings a float32 implementation
// makes on the way (u = 2^-24 per correctly rounded operation, a few ulp for library functions), taken
// over the magnitudes of the terms involved, so any order of summation or fused multiply-add passes and a
// wrong term, sign or scale does not.
#include "ir/reference/training_reference.hpp"
#include "ir/reference/roundoff.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tilesim::reference::training {
namespace {

constexpr double kSubnormalAbs = 0x1p-148;
constexpr double kPi = 3.14159265358979323846;

std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(v); }

const std::vector<float>& need(const Op& op, const std::vector<float>* values, const char* role, std::int64_t elements) {
  if (values == nullptr) throw std::invalid_argument("reference: op '" + op.name + "': its " + role + " operand is missing");
  if (static_cast<std::int64_t>(values->size()) != elements)
    throw std::invalid_argument("reference: op '" + op.name + "': its " + role + " has " + std::to_string(values->size()) +
                                " values, expected " + std::to_string(elements));
  return *values;
}

// Relative bound of g * f'(x) per function: the derivative's own error plus the multiply.
double derivative_rounding(UnaryFn fn) {
  switch (fn) {
    case UnaryFn::relu: return 0;                   // g or 0: exact
    case UnaryFn::leaky_relu:
    case UnaryFn::scale: return kU32;               // one multiply
    case UnaryFn::exp: return 10 * kU32;            // exp within 4 ulp, then the multiply
    case UnaryFn::shifted_softplus: return 12 * kU32;  // z / (z + 1) with z = exp(x): exp, add, divide, multiply
    case UnaryFn::rsqrt_or_zero: return 10 * kU32;     // x^-1.5 by pow or rsqrt and divides
    case UnaryFn::reciprocal_or_zero: return 6 * kU32;
    case UnaryFn::cosine_cutoff: return 6 * kU32;      // plus the argument's error, added below
    case UnaryFn::softplus: return 12 * kU32;          // as shifted_softplus: the same derivative
    case UnaryFn::sigmoid: return 16 * kU32;           // s (1 - s) with s = sigmoid(x): exp, add, divide, subtract, two multiplies
    case UnaryFn::sqrt: return 6 * kU32;               // grad / (2 sqrt(x)): sqrt, multiply, divide
    case UnaryFn::log: return 2 * kU32;                // grad / x: one divide
    case UnaryFn::clamp_min: return 0;                 // grad or 0: exact
  }
  return 0;
}

}  // namespace

double unary_derivative(UnaryFn fn, double s, double x) {
  switch (fn) {
    case UnaryFn::relu: return x > 0 ? 1.0 : 0.0;
    case UnaryFn::leaky_relu: return x > 0 ? 1.0 : static_cast<double>(static_cast<float>(s));
    case UnaryFn::scale: return s;
    case UnaryFn::exp: return std::exp(x);
    case UnaryFn::shifted_softplus: return x > 20 ? 1.0 : 1.0 / (1.0 + std::exp(-x));  // torch softplus_backward
    case UnaryFn::rsqrt_or_zero: return x > 0 ? -0.5 / (x * std::sqrt(x)) : 0.0;
    case UnaryFn::reciprocal_or_zero: return x != 0 ? -1.0 / (x * x) : 0.0;
    case UnaryFn::cosine_cutoff: return x < s ? -0.5 * (kPi / s) * std::sin(kPi * x / s) : 0.0;
    case UnaryFn::softplus: return x > 20 ? 1.0 : 1.0 / (1.0 + std::exp(-x));  // torch softplus_backward
    case UnaryFn::sigmoid: {
      const double y = 1.0 / (1.0 + std::exp(-x));
      return y * (1.0 - y);  // torch sigmoid_backward: grad (1 - y) y
    }
    case UnaryFn::sqrt: return 0.5 / std::sqrt(x);  // torch: grad / (2 result)
    case UnaryFn::log: return 1.0 / x;              // torch: grad / self
    case UnaryFn::clamp_min: return x >= s ? 1.0 : 0.0;  // torch: where(self >= min, grad, 0)
  }
  throw std::logic_error("reference: unknown unary function");
}

OpExpectation unary_grad(const Op& op, const Operands& o) {
  const std::int64_t n = op.shape.num_inputs * op.shape.num_features;
  const std::vector<float>& x = need(op, o.input, "input", n);
  const std::vector<float>& g = need(op, o.weight, "grad", n);
  OpExpectation e;
  e.value.resize(sz(n));
  e.bound.resize(sz(n));
  const double rounding = derivative_rounding(op.unary);
  for (std::size_t i = 0; i < sz(n); ++i) {
    const double v = static_cast<double>(g[i]) * unary_derivative(op.unary, op.scalar, x[i]);
    e.value[i] = v;
    double bound = rounding * std::fabs(v);
    if (op.unary == UnaryFn::sigmoid) {
      // torch's sigmoid_backward takes grad (1 - y) y from the rounded y: 1 - y loses u y absolutely
      // (all of it where y rounds to 1), so an absolute term u |g| y^2 (doubled) beside the relative one.
      const double y = 1.0 / (1.0 + std::exp(-static_cast<double>(x[i])));
      bound += 2 * kU32 * std::fabs(static_cast<double>(g[i])) * y * y;
    }
    if (op.unary == UnaryFn::cosine_cutoff && x[i] < op.scalar) {
      // sin's argument pi x / c carries ~3 roundings: an absolute error of 3u |arg| in sin.
      const double arg = kPi * x[i] / op.scalar;
      bound += 0.5 * (kPi / op.scalar) * std::fabs(static_cast<double>(g[i])) * kU32 * (3 * std::fabs(arg) + 4);
    }
    e.bound[i] = bound + kSubnormalAbs;
  }
  e.rule = op.unary == UnaryFn::relu ? "each element exact (grad where x > 0, else 0)"
                                     : "each element within " + std::to_string(static_cast<int>(rounding / kU32)) +
                                           " * 2^-24 |value| (the derivative and the multiply)";
  return e;
}

OpExpectation sum_to(const Op& op, const Operands& o) {
  const OpShape& s = op.shape;
  const std::vector<float>& x = need(op, o.input, "input", s.num_inputs * s.num_features);
  if (s.other_groups <= 0 || s.num_features % s.other_groups != 0 || (s.other_rows != 1 && s.other_rows != s.num_inputs))
    throw std::invalid_argument("reference: op '" + op.name + "': sum_to's shape is not one input can be broadcast from");
  const std::int64_t per_group = s.num_features / s.other_groups;
  std::vector<double> sum(sz(s.other_rows * s.other_groups), 0.0), abs_sum(sum.size(), 0.0);
  for (std::int64_t r = 0; r < s.num_inputs; ++r)
    for (std::int64_t c = 0; c < s.num_features; ++c) {
      const std::size_t out = sz((s.other_rows == 1 ? 0 : r) * s.other_groups + c / per_group);
      const double v = x[sz(r * s.num_features + c)];
      sum[out] += v;
      abs_sum[out] += std::fabs(v);
    }
  const double terms = static_cast<double>((s.other_rows == 1 ? s.num_inputs : 1) * per_group);
  OpExpectation e;
  e.value = sum;
  e.bound.resize(sum.size());
  for (std::size_t i = 0; i < sum.size(); ++i) e.bound[i] = ((terms - 1) * kU32 + terms * kU64) * abs_sum[i] + kTinyAbs;
  e.rule = "each element within (n - 1) * 2^-24 * sum|terms| for its n = " + std::to_string(static_cast<std::int64_t>(terms)) + " terms";
  return e;
}

namespace {

// One row of logits: its max, logsumexp and the softmax, in double.
struct SoftmaxRow {
  double max = -INFINITY, lse = 0;
};

SoftmaxRow softmax_row(const float* x, std::int64_t c) {
  SoftmaxRow r;
  for (std::int64_t j = 0; j < c; ++j) r.max = std::max(r.max, static_cast<double>(x[j]));
  double sum = 0;
  for (std::int64_t j = 0; j < c; ++j) sum += std::exp(static_cast<double>(x[j]) - r.max);
  r.lse = r.max + std::log(sum);
  return r;
}

// How far a float32 log-softmax of one element may be off: the subtract of the max and of the log of
// the sum (each one rounding of their magnitudes), the sum of C exponentials (C ulp relative, so C u
// absolute after the log) and the exponentials themselves (4 ulp each, relative).
double log_softmax_error(double x, const SoftmaxRow& r, std::int64_t c) {
  return kU32 * (std::fabs(x) + 2 * std::fabs(r.max) + std::fabs(r.lse) + static_cast<double>(c) + 12);
}

// A cross-entropy op's labels, one per row, each in [0, C).
const std::vector<std::int32_t>& labels_of(const Op& op, const Operands& o, std::int64_t rows, std::int64_t classes) {
  if (o.indices == nullptr || static_cast<std::int64_t>(o.indices->size()) != rows)
    throw std::invalid_argument("reference: op '" + op.name + "': its labels do not match its " + std::to_string(rows) + " rows");
  for (const std::int32_t label : *o.indices)
    if (label < 0 || label >= classes) throw std::out_of_range("reference: op '" + op.name + "': a label is outside [0, C)");
  return *o.indices;
}

// A loss's row weights (Op::aux), each finite and >= 0, and their sum.
struct RowWeights {
  const std::vector<float>& w;
  double sum = 0;
};
RowWeights row_weights_of(const Op& op, const Operands& o, std::int64_t rows) {
  RowWeights r{need(op, o.loss_row_weights(), "row weights", rows)};
  for (const float w : r.w) {
    if (!(w >= 0) || std::isinf(w))
      throw std::invalid_argument("reference: op '" + op.name + "': a row weight is negative, infinite or NaN");
    r.sum += w;
  }
  return r;
}

// The weighted mean (ir/op_graph.hpp, LossFn): sum_r w_r l_r / (D sum_r w_r) with D = 1 (cross entropy)
// or C (mse, l_r the row's sum of squares); 0 when the weights sum to 0. The bound adds to the terms'
// own errors (as in the unweighted mean, each term now times its w_r >= 0, one more rounding for the
// multiply) the weights' sum ((M - 1) u relative, any order), the multiply by C and the divide:
// (M + 2) u of the value. With 0/1 weights the value is the unweighted mean over the rows of weight 1
// to the last bit: w_r l_r is l_r or 0, and adding 0 changes no partial sum.
OpExpectation weighted_loss(const Op& op, const Operands& o) {
  const std::int64_t m = op.shape.num_inputs, c = op.shape.num_features;
  const std::vector<float>& x = need(op, o.input, "predictions", m * c);
  const RowWeights w = row_weights_of(op, o, m);
  double total = 0, total_abs = 0, error = 0;
  const bool ce = op.loss == LossFn::cross_entropy;
  const std::vector<std::int32_t>* labels = ce ? &labels_of(op, o, m, c) : nullptr;
  const std::vector<float>* t = ce ? nullptr : &need(op, o.weight, "targets", m * c);
  for (std::int64_t r = 0; r < m; ++r) {
    const float* row = x.data() + r * c;
    const double wr = w.w[sz(r)];
    if (ce) {
      const std::int32_t label = (*labels)[sz(r)];
      const SoftmaxRow s = softmax_row(row, c);
      const double l = s.lse - row[label];
      total += wr * l;
      total_abs += wr * std::fabs(l);
      error += wr * log_softmax_error(row[label], s, c);
      continue;
    }
    // Element by element, in the unweighted sum's order.
    for (std::int64_t j = 0; j < c; ++j) {
      const double d = static_cast<double>(row[j]) - (*t)[sz(r * c + j)];
      total += wr * (d * d);
      total_abs += wr * (d * d);
      error += wr * 3 * kU32 * d * d;  // the subtract's rounding, doubled by the square, and the square's
    }
  }
  // Terms summed: the rows' (cross entropy) or every element's (mse, in any order, as the unweighted bound).
  const double n = ce ? static_cast<double>(m) : static_cast<double>(m * c);
  const double divisor = (ce ? 1.0 : static_cast<double>(c)) * w.sum;
  OpExpectation e;
  if (w.sum == 0) {
    // No row counts (an all-padding batch): the loss is 0, not 0 / 0.
    e.value = {0.0};
    e.bound = {0.0};
    e.rule = "exactly 0: the row weights sum to 0";
    return e;
  }
  e.value = {total / divisor};
  e.bound = {(error + (n + 1) * kU32 * total_abs) / divisor + (static_cast<double>(m) + 2) * kU32 * std::fabs(e.value[0]) + kTinyAbs};
  e.rule = ce ? "within (sum w_r (log-softmax error_r) + (n + 1) u sum w_r |row loss|) / sum w + (M + 2) u |value|"
              : "within (n + 4) * 2^-24 * sum w_r (x - t)^2 / (C sum w) + (M + 2) * 2^-24 |value|";
  return e;
}

// The weighted gradient: row r scaled by w_r / sum w instead of 1 / M (mse: 2 w_r / (C sum w) instead of
// 2 / (M C)), all 0 when the weights sum to 0. Computed as d w_r / sum w so that weight 1 gives d / count
// to the last bit. The bound: the unweighted one's terms at the new scale, with the weights' sum
// ((M - 1) u), its divide and the multiplies in place of 1/M's rounding: (M + 2) u (mse: (M + 4) u) of
// the value.
OpExpectation weighted_loss_grad(const Op& op, const Operands& o) {
  const std::int64_t m = op.shape.num_inputs, c = op.shape.num_features;
  const std::vector<float>& x = need(op, o.input, "predictions", m * c);
  const RowWeights w = row_weights_of(op, o, m);
  const double rounding = static_cast<double>(m) * kU32;
  OpExpectation e;
  e.value.assign(x.size(), 0.0);
  e.bound.assign(x.size(), kSubnormalAbs);
  if (op.loss == LossFn::cross_entropy) {
    const std::vector<std::int32_t>& labels = labels_of(op, o, m, c);
    e.rule = "each element within w_r / sum w (p (log-softmax error) + 2u |p - y|) + (M + 2) u |value|; 0 where sum w = 0";
    if (w.sum == 0) return e;
    for (std::int64_t r = 0; r < m; ++r) {
      const float* row = x.data() + r * c;
      const std::int32_t label = labels[sz(r)];
      const double wr = w.w[sz(r)], scale = wr / w.sum;
      const SoftmaxRow s = softmax_row(row, c);
      for (std::int64_t j = 0; j < c; ++j) {
        const double p = std::exp(static_cast<double>(row[j]) - s.lse);
        const double d = p - (j == label ? 1.0 : 0.0);
        const std::size_t el = sz(r * c + j);
        e.value[el] = d * wr / w.sum;
        e.bound[el] = scale * (p * log_softmax_error(row[j], s, c) + 2 * kU32 * std::fabs(d)) +
                      (rounding + 2 * kU32) * std::fabs(e.value[el]) + kSubnormalAbs;
      }
    }
    return e;
  }
  const std::vector<float>& t = need(op, o.weight, "targets", m * c);
  e.rule = "each element within (M + 4) * 2^-24 |2 w_r (x - t) / (C sum w)|; 0 where sum w = 0";
  if (w.sum == 0) return e;
  const double divisor = static_cast<double>(c) * w.sum;
  for (std::size_t i = 0; i < x.size(); ++i) {
    e.value[i] = 2.0 * (static_cast<double>(x[i]) - t[i]) * static_cast<double>(w.w[i / sz(c)]) / divisor;
    e.bound[i] = (rounding + 4 * kU32) * std::fabs(e.value[i]) + kSubnormalAbs;
  }
  return e;
}

}  // namespace

OpExpectation loss(const Op& op, const Operands& o) {
  if (op.loss_row_weights() >= 0) return weighted_loss(op, o);
  const std::int64_t m = op.shape.num_inputs, c = op.shape.num_features;
  const std::vector<float>& x = need(op, o.input, "predictions", m * c);
  double total = 0, total_abs = 0, error = 0;
  if (op.loss == LossFn::cross_entropy) {
    const std::vector<std::int32_t>& labels = labels_of(op, o, m, c);
    for (std::int64_t r = 0; r < m; ++r) {
      const float* row = x.data() + r * c;
      const std::int32_t label = labels[sz(r)];
      const SoftmaxRow s = softmax_row(row, c);
      const double l = s.lse - row[label];
      total += l;
      total_abs += std::fabs(l);
      error += log_softmax_error(row[label], s, c);
    }
  } else {
    const std::vector<float>& t = need(op, o.weight, "targets", m * c);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double d = static_cast<double>(x[i]) - t[i];
      total += d * d;
      total_abs += d * d;
      error += 3 * kU32 * d * d;  // the subtract's rounding, doubled by the square, and the square's
    }
  }
  const double n = op.loss == LossFn::cross_entropy ? static_cast<double>(m) : static_cast<double>(m * c);
  OpExpectation e;
  e.value = {total / n};
  // The mean: a sum of n terms in any order ((n - 1) u of their magnitudes), then the divide.
  e.bound = {(error + (n + 1) * kU32 * total_abs) / n + kTinyAbs};
  e.rule = op.loss == LossFn::cross_entropy
               ? "within the rows' log-softmax errors u (|x| + 2|max| + |lse| + C + 12) and (n + 1) u sum|row losses|, over n"
               : "within (n + 4) * 2^-24 * sum (x - t)^2 / n";
  return e;
}

OpExpectation loss_grad(const Op& op, const Operands& o) {
  if (op.loss_row_weights() >= 0) return weighted_loss_grad(op, o);
  const std::int64_t m = op.shape.num_inputs, c = op.shape.num_features;
  const std::vector<float>& x = need(op, o.input, "predictions", m * c);
  OpExpectation e;
  e.value.resize(x.size());
  e.bound.resize(x.size());
  if (op.loss == LossFn::cross_entropy) {
    const std::vector<std::int32_t>& labels = labels_of(op, o, m, c);
    for (std::int64_t r = 0; r < m; ++r) {
      const float* row = x.data() + r * c;
      const std::int32_t label = labels[sz(r)];
      const SoftmaxRow s = softmax_row(row, c);
      for (std::int64_t j = 0; j < c; ++j) {
        const double p = std::exp(static_cast<double>(row[j]) - s.lse);
        const double d = p - (j == label ? 1.0 : 0.0);
        const std::size_t el = sz(r * c + j);
        e.value[el] = d / static_cast<double>(m);
        // p = exp(log-softmax): the log-softmax's absolute error becomes p's relative error; then the
        // one-hot subtract and the scale by 1/M (a divide, or a multiply by a rounded 1/M).
        e.bound[el] = (p * log_softmax_error(row[j], s, c) + 2 * kU32 * std::fabs(d)) / static_cast<double>(m) +
                      2 * kU32 * std::fabs(e.value[el]) + kSubnormalAbs;
      }
    }
    e.rule = "each element within (p (log-softmax error) + 2u |p - y|) / M + 2u |value|";
  } else {
    const std::vector<float>& t = need(op, o.weight, "targets", m * c);
    const double n = static_cast<double>(m * c);
    for (std::size_t i = 0; i < x.size(); ++i) {
      e.value[i] = 2.0 * (static_cast<double>(x[i]) - t[i]) / n;
      e.bound[i] = 4 * kU32 * std::fabs(e.value[i]) + kSubnormalAbs;  // subtract, 2/n rounded, two multiplies
    }
    e.rule = "each element within 4 * 2^-24 |2 (x - t) / n|";
  }
  return e;
}

OpExpectation optimizer_step(const Op& op, const Operands& o) {
  const std::int64_t p_count = op.shape.num_inputs * op.shape.num_features;
  const std::size_t count = sz(p_count);
  const OptimizerSpec& spec = op.optimizer;
  const std::int64_t rows = spec.state_rows();
  const std::vector<float>& p = need(op, o.input, "parameter", p_count);
  const std::vector<float>& g = need(op, o.weight, "grad", p_count);
  const std::vector<float>* state = rows > 0 ? &need(op, o.optimizer_state(), "state", rows * p_count) : nullptr;
  OpExpectation e;
  e.value.resize(count * sz(1 + rows));
  e.bound.resize(e.value.size());
  const double wd = spec.weight_decay, lr = spec.lr;
  for (std::size_t i = 0; i < count; ++i) {
    const double pi = p[i], gi = g[i];
    const double g2 = gi + wd * pi;
    const double err_g2 = 2 * kU32 * (std::fabs(gi) + std::fabs(wd * pi));
    if (spec.kind == OptimizerSpec::Kind::sgd) {
      if (rows == 0) {
        const double upd = lr * g2;
        e.value[i] = pi - upd;
        e.bound[i] = 2 * kU32 * (std::fabs(pi) + std::fabs(upd)) + lr * err_g2 + kSubnormalAbs;
      } else {
        const double b = (*state)[i];
        const double b2 = spec.momentum * b + g2;
        const double err_b2 = 3 * kU32 * (std::fabs(spec.momentum * b) + std::fabs(g2)) + err_g2;
        const double upd = lr * b2;
        e.value[i] = pi - upd;
        e.bound[i] = 2 * kU32 * (std::fabs(pi) + std::fabs(upd)) + lr * err_b2 + kSubnormalAbs;
        e.value[count + i] = b2;
        e.bound[count + i] = err_b2 + kSubnormalAbs;
      }
      continue;
    }
    // Adam.
    const double t = (*o.step_number())[0];
    const double b1 = spec.beta1, b2 = spec.beta2;
    const double m0 = (*state)[i], v0 = (*state)[count + i];
    const double m1 = b1 * m0 + (1 - b1) * g2;
    const double v1 = b2 * v0 + (1 - b2) * g2 * g2;
    // The betas and 1 - beta as float32 constants (a few u relative), the multiplies and the add.
    const double err_m1 = 4 * kU32 * (std::fabs(b1 * m0) + std::fabs((1 - b1) * g2)) + (1 - b1) * err_g2;
    const double err_v1 = 5 * kU32 * (std::fabs(b2 * v0) + (1 - b2) * g2 * g2) + (1 - b2) * 2 * std::fabs(g2) * err_g2;
    const double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
    const double sqrt_v1 = std::sqrt(v1);
    const double denom = sqrt_v1 / std::sqrt(bc2) + spec.eps;
    const double err_sqrt = (v1 > 0 ? err_v1 / (2 * sqrt_v1) : std::sqrt(err_v1)) + kU32 * sqrt_v1;
    const double err_denom = (err_sqrt + 2 * kU32 * sqrt_v1) / std::sqrt(bc2) + kU32 * denom;
    const double upd = (lr / bc1) * m1 / denom;
    // Bias corrections from float32 betas raised to t: about t u relative on beta^t, magnified by
    // beta^t / (1 - beta^t) in the correction.
    const double err_bc = kU32 * (8 + 2 * t) * (std::pow(b1, t) / bc1 + std::pow(b2, t) / bc2 + 1);
    const double err_upd = (lr / bc1) * err_m1 / denom + std::fabs(upd) * (err_denom / denom + 4 * kU32 + err_bc);
    e.value[i] = pi - upd;
    e.bound[i] = kU32 * (std::fabs(pi) + std::fabs(upd)) + err_upd + kSubnormalAbs;
    e.value[count + i] = m1;
    e.bound[count + i] = err_m1 + kSubnormalAbs;
    e.value[2 * count + i] = v1;
    e.bound[2 * count + i] = err_v1 + kSubnormalAbs;
  }
  e.rule = spec.kind == OptimizerSpec::Kind::adam
               ? "torch.optim.Adam's update in double; each element within the roundings of the moment updates, the "
                 "denominator and the step (a few u of each term's magnitude)"
               : "torch.optim.SGD's update in double; each element within 2u (|p| + |lr b|) plus the gradient's roundings";
  return e;
}

}  // namespace tilesim::reference::training
