// Training kernels. The derivatives are evaluated in double and rounded once (a relu's is a select),
// the loss reduces rows in double, and the optimizers follow torch.optim's single-tensor loops: scalars
// (bias corrections, step size) in double, the per-element arithmetic in float32.
#include "kernels/cpu/training_ops.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "kernels/cpu/parallel.hpp"

namespace tilesim::kernels::cpu {
namespace {

constexpr double kPi = 3.14159265358979323846;

// f'(x) as torch's backward formulas take it at the kinks (relu and leaky_relu: the x <= 0 branch at 0;
// softplus: 1 above torch's threshold 20).
inline double derivative(UnaryFn fn, double s, double x) {
  switch (fn) {
    case UnaryFn::relu: return x > 0 ? 1.0 : 0.0;
    case UnaryFn::leaky_relu: return x > 0 ? 1.0 : s;
    case UnaryFn::scale: return s;
    case UnaryFn::exp: return std::exp(x);
    case UnaryFn::shifted_softplus: return x > 20 ? 1.0 : 1.0 / (1.0 + std::exp(-x));
    case UnaryFn::rsqrt_or_zero: return x > 0 ? -0.5 / (x * std::sqrt(x)) : 0.0;
    case UnaryFn::reciprocal_or_zero: return x != 0 ? -1.0 / (x * x) : 0.0;
    case UnaryFn::cosine_cutoff: return x < s ? -0.5 * (kPi / s) * std::sin(kPi * x / s) : 0.0;
    case UnaryFn::softplus: return x > 20 ? 1.0 : 1.0 / (1.0 + std::exp(-x));
    case UnaryFn::sigmoid: {
      const double y = 1.0 / (1.0 + std::exp(-x));
      return y * (1.0 - y);
    }
    case UnaryFn::sqrt: return 0.5 / std::sqrt(x);
    case UnaryFn::log: return 1.0 / x;
    case UnaryFn::clamp_min: return x >= s ? 1.0 : 0.0;
  }
  return 0;
}

}  // namespace

void unary_grad_f32(UnaryFn fn, float scalar, const float* x, const float* g, std::int64_t count, float* out) {
  parallel::for_each_block(count, 12 * count, [&](std::int64_t begin, std::int64_t end) {
    if (fn == UnaryFn::relu) {
#pragma omp simd
      for (std::int64_t i = begin; i < end; ++i) out[i] = x[i] > 0.0f ? g[i] : 0.0f;
      return;
    }
    const double s = fn == UnaryFn::leaky_relu ? static_cast<double>(static_cast<float>(scalar)) : scalar;
    for (std::int64_t i = begin; i < end; ++i) out[i] = static_cast<float>(g[i] * derivative(fn, s, x[i]));
  });
}

void sum_to_f32(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t other_rows, std::int64_t other_groups,
                float* out) {
  if (other_groups <= 0 || cols % other_groups != 0 || (other_rows != 1 && other_rows != rows))
    throw std::invalid_argument("sum_to_f32: " + std::to_string(other_rows) + " x " + std::to_string(other_groups) +
                                " is not a shape " + std::to_string(rows) + " x " + std::to_string(cols) + " broadcasts from");
  const std::int64_t per_group = cols / other_groups;
  if (other_rows == rows) {  // per-row group sums: each row on one thread
    parallel::for_each_block(rows, 4 * rows * cols, [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t gi = 0; gi < other_groups; ++gi) {
          float sum = 0;
          const float* a = x + r * cols + gi * per_group;
#pragma omp simd reduction(+ : sum)
          for (std::int64_t c = 0; c < per_group; ++c) sum += a[c];
          out[r * other_groups + gi] = sum;
        }
    });
    return;
  }
  // Column sums: each thread sums a block of rows into its own row of partial sums, then they are added.
  const int threads = parallel::threads_for(4 * rows * cols);
  std::vector<float> partial(static_cast<std::size_t>(threads * cols), 0.0f);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int parts = omp_get_num_threads(), part = omp_get_thread_num();
    float* acc = partial.data() + part * cols;
    for (std::int64_t r = parallel::part_begin(rows, parts, part); r < parallel::part_begin(rows, parts, part + 1); ++r) {
      const float* a = x + r * cols;
#pragma omp simd
      for (std::int64_t c = 0; c < cols; ++c) acc[c] += a[c];
    }
  }
  for (std::int64_t gi = 0; gi < other_groups; ++gi) {
    float sum = 0;
    for (int t = 0; t < threads; ++t)
      for (std::int64_t c = gi * per_group; c < (gi + 1) * per_group; ++c) sum += partial[static_cast<std::size_t>(t * cols + c)];
    out[gi] = sum;
  }
}

namespace {

// Row r's max and log-sum-exp in double.
inline void row_lse(const float* row, std::int64_t cols, double& max, double& lse) {
  max = -INFINITY;
  for (std::int64_t j = 0; j < cols; ++j) max = std::max(max, static_cast<double>(row[j]));
  double sum = 0;
  for (std::int64_t j = 0; j < cols; ++j) sum += std::exp(static_cast<double>(row[j]) - max);
  lse = max + std::log(sum);
}

void check_labels(const std::int32_t* labels, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t r = 0; r < rows; ++r)
    if (labels[r] < 0 || labels[r] >= cols)
      throw std::out_of_range("loss_f32: label " + std::to_string(labels[r]) + " of row " + std::to_string(r) +
                              " is outside [0, " + std::to_string(cols) + ")");
}

double weight_sum(const float* w, std::int64_t rows) {
  double sum = 0;
  for (std::int64_t r = 0; r < rows; ++r) sum += w[r];
  return sum;
}

// The weighted forms (ir/op_graph.hpp, LossFn): the unweighted loops with each term times its row's
// weight, so that 0/1 weights sum the same terms in the same order as the unweighted loss over the
// rows of weight 1. A weight sum of 0 (an all-padding batch) gives 0, not 0 / 0.
void weighted_loss(LossFn fn, const float* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels,
                   const float* targets, const float* w, float* out) {
  const double sum_w = weight_sum(w, rows);
  double total = 0;
  if (fn == LossFn::cross_entropy) {
#pragma omp parallel for reduction(+ : total) if (parallel::threads_for(4 * rows * cols) > 1)
    for (std::int64_t r = 0; r < rows; ++r) {
      double max, lse;
      row_lse(x + r * cols, cols, max, lse);
      total += static_cast<double>(w[r]) * (lse - x[r * cols + labels[r]]);
    }
    out[0] = sum_w > 0 ? static_cast<float>(total / sum_w) : 0.0f;
    return;
  }
  const std::int64_t n = rows * cols;
#pragma omp parallel for simd reduction(+ : total) if (parallel::threads_for(8 * n) > 1)
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - targets[i];
    total += static_cast<double>(w[i / cols]) * (d * d);
  }
  out[0] = sum_w > 0 ? static_cast<float>(total / (static_cast<double>(cols) * sum_w)) : 0.0f;
}

// Cross entropy's gradient row by row: (softmax(x_r) - onehot(label_r)) * scale(r).
template <class Scale>
void cross_entropy_grad_rows(const float* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels, Scale scale,
                             float* out) {
#pragma omp parallel for if (parallel::threads_for(8 * rows * cols) > 1)
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    const double s = scale(r);
    double max, lse;
    row_lse(row, cols, max, lse);
    for (std::int64_t j = 0; j < cols; ++j) {
      const double p = std::exp(static_cast<double>(row[j]) - lse);
      out[r * cols + j] = static_cast<float>((p - (j == labels[r] ? 1.0 : 0.0)) * s);
    }
  }
}

void weighted_loss_grad(LossFn fn, const float* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels,
                        const float* targets, const float* w, float* out) {
  const double sum_w = weight_sum(w, rows);
  if (fn == LossFn::cross_entropy) {
    // Weight 1: 1 / count, as the unweighted 1 / rows.
    cross_entropy_grad_rows(x, rows, cols, labels, [&](std::int64_t r) { return sum_w > 0 ? w[r] / sum_w : 0.0; }, out);
    return;
  }
  parallel::for_each_block(rows, 12 * rows * cols, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const float scale = sum_w > 0 ? static_cast<float>(2.0 * w[r] / (static_cast<double>(cols) * sum_w)) : 0.0f;
#pragma omp simd
      for (std::int64_t j = r * cols; j < (r + 1) * cols; ++j) out[j] = scale * (x[j] - targets[j]);
    }
  });
}

}  // namespace

void loss_f32(LossFn fn, const float* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels,
              const float* targets, const float* row_weights, float* out) {
  if (fn == LossFn::cross_entropy) check_labels(labels, rows, cols);
  if (row_weights != nullptr) return weighted_loss(fn, x, rows, cols, labels, targets, row_weights, out);
  double total = 0;
  if (fn == LossFn::cross_entropy) {
#pragma omp parallel for reduction(+ : total) if (parallel::threads_for(4 * rows * cols) > 1)
    for (std::int64_t r = 0; r < rows; ++r) {
      double max, lse;
      row_lse(x + r * cols, cols, max, lse);
      total += lse - x[r * cols + labels[r]];
    }
    out[0] = static_cast<float>(total / static_cast<double>(rows));
    return;
  }
  const std::int64_t n = rows * cols;
#pragma omp parallel for simd reduction(+ : total) if (parallel::threads_for(8 * n) > 1)
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - targets[i];
    total += d * d;
  }
  out[0] = static_cast<float>(total / static_cast<double>(n));
}

void loss_grad_f32(LossFn fn, const float* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels,
                   const float* targets, const float* row_weights, float* out) {
  if (fn == LossFn::cross_entropy) check_labels(labels, rows, cols);
  if (row_weights != nullptr) return weighted_loss_grad(fn, x, rows, cols, labels, targets, row_weights, out);
  if (fn == LossFn::cross_entropy) {
    const double inv_rows = 1.0 / static_cast<double>(rows);
    cross_entropy_grad_rows(x, rows, cols, labels, [&](std::int64_t) { return inv_rows; }, out);
    return;
  }
  const std::int64_t n = rows * cols;
  const float scale = static_cast<float>(2.0 / static_cast<double>(n));
  parallel::for_each_block(n, 12 * n, [&](std::int64_t begin, std::int64_t end) {
#pragma omp simd
    for (std::int64_t i = begin; i < end; ++i) out[i] = scale * (x[i] - targets[i]);
  });
}

void optimizer_step_f32(const OptimizerSpec& spec, const float* p, const float* g, const float* state, double step,
                        std::int64_t count, float* out) {
  const float wd = static_cast<float>(spec.weight_decay), lr = static_cast<float>(spec.lr);
  float* p_out = out;
  if (spec.kind == OptimizerSpec::Kind::sgd) {
    if (spec.momentum == 0) {
      parallel::for_each_block(count, 12 * count, [&](std::int64_t begin, std::int64_t end) {
#pragma omp simd
        for (std::int64_t i = begin; i < end; ++i) p_out[i] = p[i] - lr * (g[i] + wd * p[i]);
      });
      return;
    }
    const float mu = static_cast<float>(spec.momentum);
    float* b_out = out + count;
    parallel::for_each_block(count, 20 * count, [&](std::int64_t begin, std::int64_t end) {
#pragma omp simd
      for (std::int64_t i = begin; i < end; ++i) {
        const float b = mu * state[i] + (g[i] + wd * p[i]);
        b_out[i] = b;
        p_out[i] = p[i] - lr * b;
      }
    });
    return;
  }
  // Adam: torch's step_size = lr / (1 - beta1^t) and bias_correction2_sqrt = sqrt(1 - beta2^t) as Python
  // floats (double), then denom = sqrt(v) / bias_correction2_sqrt + eps and p -= step_size * m / denom.
  const double bc1 = 1 - std::pow(spec.beta1, step), bc2_sqrt = std::sqrt(1 - std::pow(spec.beta2, step));
  const float step_size = static_cast<float>(spec.lr / bc1), inv_bc2_sqrt = static_cast<float>(1.0 / bc2_sqrt);
  const float b1 = static_cast<float>(spec.beta1), b2 = static_cast<float>(spec.beta2);
  const float one_minus_b1 = static_cast<float>(1 - spec.beta1), one_minus_b2 = static_cast<float>(1 - spec.beta2);
  const float eps = static_cast<float>(spec.eps);
  const float* m0 = state;
  const float* v0 = state + count;
  float* m_out = out + count;
  float* v_out = out + 2 * count;
  parallel::for_each_block(count, 28 * count, [&](std::int64_t begin, std::int64_t end) {
#pragma omp simd
    for (std::int64_t i = begin; i < end; ++i) {
      const float gi = g[i] + wd * p[i];
      const float m = b1 * m0[i] + one_minus_b1 * gi;
      const float v = b2 * v0[i] + one_minus_b2 * gi * gi;
      m_out[i] = m;
      v_out[i] = v;
      p_out[i] = p[i] - step_size * m / (std::sqrt(v) * inv_bc2_sqrt + eps);
    }
  });
}

}  // namespace tilesim::kernels::cpu
