#pragma once
// The CUDA kernels' per-thread bodies for the op kinds a training step adds (ir/op_graph.hpp): the
// derivatives of the unary functions, sums down to a broadcast shape, the loss and its gradient, and the
// optimizers' updates. Same contract as kernel_bodies.hpp: __host__ __device__ bodies over a 1-D
// grid-stride loop, wrapped by cuda_kernels.cu and run on the host by the tests (emulate.hpp). The
// reductions give each output element (or loss row) to one thread, summing in a fixed order: kernels
// for correctness on any shape, not tuned tree reductions. Templates on the storage policy as there:
// operands loaded to float32, float32 arithmetic and accumulators (the loss's per-row losses, the
// column sums' partials and the row weights stay float32 in every dtype), one rounding per stored
// result.
#include <cmath>
#include <cstdint>

#include "kernels/cuda/kernel_bodies.hpp"

namespace tilesim::kernels::cuda {

// g * f'(x) for the op graph's unary functions, as torch's backward formulas take them (relu and
// leaky_relu: the x <= 0 branch at 0; softplus: z / (z + 1) with z = e^x, and 1 above the threshold 20).
TILESIM_HD inline float unary_grad_value(UnaryFn fn, float x, float g, float scalar) {
  switch (fn) {
    case UnaryFn::relu: return x > 0.0f ? g : 0.0f;
    case UnaryFn::leaky_relu: return x > 0.0f ? g : g * scalar;
    case UnaryFn::scale: return g * scalar;
    case UnaryFn::exp: return g * expf(x);
    case UnaryFn::shifted_softplus: {
      if (x > 20.0f) return g;
      const float z = expf(x);
      return g * (z / (z + 1.0f));
    }
    case UnaryFn::softplus: {
      if (x > 20.0f) return g;
      const float z = expf(x);
      return g * (z / (z + 1.0f));
    }
    case UnaryFn::sigmoid: {
      const float y = 1.0f / (1.0f + expf(-x));
      return g * (1.0f - y) * y;
    }
    case UnaryFn::sqrt: return g / (2.0f * sqrtf(x));
    case UnaryFn::log: return g / x;
    case UnaryFn::clamp_min: return x >= scalar ? g : 0.0f;
    case UnaryFn::rsqrt_or_zero: return x > 0.0f ? g * (-0.5f / (x * sqrtf(x))) : 0.0f;
    case UnaryFn::reciprocal_or_zero: return x != 0.0f ? g * (-1.0f / (x * x)) : 0.0f;
    case UnaryFn::cosine_cutoff: {
      if (!(x < scalar)) return 0.0f;
      const float w = 3.14159265358979323846f / scalar;
      return g * (-0.5f * w * sinf(x * w));
    }
  }
  return 0.0f;
}

// unary_grad, one element per item.
template <class S = Float32Storage>
TILESIM_HD void unary_grad_body(const ThreadIndex& t, UnaryFn fn, float scalar, const typename S::type* x, const typename S::type* g,
                                std::int64_t count, typename S::type* out) {
  for (std::int64_t e = t.global(); e < count; e += t.stride()) out[e] = S::store(unary_grad_value(fn, S::load(x[e]), S::load(g[e]), scalar));
}

// segment_matmul's input gradient (transpose_weight), one output element per item: out[r, c] =
// sum_k in[r, k] weight[s(r), c, k], the forward's weight [S, depth', cols'] read transposed (stored
// [segments, cols, depth]). Consecutive threads take consecutive columns: a warp broadcasts one input row
// and reads its weight rows strided; a kernel for correctness, not pyg_lib's grouped GEMM.
template <class S = Float32Storage>
TILESIM_HD void segment_matmul_transposed_weight_body(const ThreadIndex& t, const typename S::type* in, std::int64_t rows, std::int64_t depth,
                                                      const std::int32_t* offsets, std::int64_t segments, const typename S::type* weight,
                                                      std::int64_t cols, typename S::type* out) {
  const std::int64_t items = rows * cols;
  for (std::int64_t e = t.global(); e < items; e += t.stride()) {
    const std::int64_t r = e / cols, c = e - r * cols;
    const typename S::type* w = weight + (segment_of(offsets, segments, r) * cols + c) * depth;
    const typename S::type* x = in + r * depth;
    float acc = 0.0f;
    for (std::int64_t k = 0; k < depth; ++k) acc += S::load(x[k]) * S::load(w[k]);
    out[e] = S::store(acc);
  }
}

// segment_matmul's weight gradient (transpose_input), one output element per item: out[s, p, c] = sum
// over the rows r of segment s of in[r, p] g[r, c] (in [rows, depth], g [rows, cols], out [segments *
// depth, cols]); an empty segment's elements are 0. Consecutive threads take consecutive columns, so a
// warp reads a row of g coalesced and broadcasts in[r, p].
template <class S = Float32Storage>
TILESIM_HD void segment_matmul_transposed_input_body(const ThreadIndex& t, const typename S::type* in, std::int64_t depth,
                                                     const std::int32_t* offsets, std::int64_t segments, const typename S::type* g,
                                                     std::int64_t cols, typename S::type* out) {
  const std::int64_t items = segments * depth * cols;
  for (std::int64_t e = t.global(); e < items; e += t.stride()) {
    const std::int64_t sp = e / cols, c = e - sp * cols;
    const std::int64_t s = sp / depth, p = sp - s * depth;
    float acc = 0.0f;
    for (std::int64_t r = offsets[s]; r < offsets[s + 1]; ++r) acc += S::load(in[r * depth + p]) * S::load(g[r * cols + c]);
    out[e] = S::store(acc);
  }
}

// sum_to, one output element per item: x [rows, features] summed to [other_rows, groups] (other_rows 1:
// over every row; other_rows == rows: within each row), each group `features / groups` columns wide.
// In and Out storages differ when it sums the float32 partials below into a half output.
template <class In = Float32Storage, class Out = In>
TILESIM_HD void sum_to_body(const ThreadIndex& t, const typename In::type* x, std::int64_t rows, std::int64_t features, std::int64_t other_rows,
                            std::int64_t groups, typename Out::type* out) {
  const std::int64_t items = other_rows * groups, width = features / groups;
  for (std::int64_t o = t.global(); o < items; o += t.stride()) {
    const std::int64_t g = o % groups;
    const std::int64_t r0 = other_rows == 1 ? 0 : o / groups, r1 = other_rows == 1 ? rows : r0 + 1;
    float acc = 0.0f;
    for (std::int64_t r = r0; r < r1; ++r)
      for (std::int64_t c = g * width; c < (g + 1) * width; ++c) acc += In::load(x[r * features + c]);
    out[o] = Out::store(acc);
  }
}

// Column sums in two passes, so a tall input (a bias's gradient over every edge) is summed by many
// threads: first each block of `chunk_rows` rows of each column into partial [chunks, features] (one
// item per partial sum; consecutive threads take consecutive columns, so a warp reads one row's
// consecutive elements), then sum_to_body over the partials. The partials are float32 in every dtype:
// the sum rounds to a half dtype once, at its output.
constexpr std::int64_t kSumToChunkRows = 256;
inline std::int64_t sum_to_chunks(std::int64_t rows) { return (rows + kSumToChunkRows - 1) / kSumToChunkRows; }
template <class S = Float32Storage>
TILESIM_HD void column_partials_body(const ThreadIndex& t, const typename S::type* x, std::int64_t rows, std::int64_t features,
                                     std::int64_t chunk_rows, float* partial) {
  const std::int64_t chunks = (rows + chunk_rows - 1) / chunk_rows, items = chunks * features;
  for (std::int64_t e = t.global(); e < items; e += t.stride()) {
    const std::int64_t c = e / features, f = e - c * features;
    const std::int64_t r1 = (c + 1) * chunk_rows < rows ? (c + 1) * chunk_rows : rows;
    float acc = 0.0f;
    for (std::int64_t r = c * chunk_rows; r < r1; ++r) acc += S::load(x[r * features + f]);
    partial[e] = acc;
  }
}

// A row's max and sum of e^(x - max), the pieces of its log-sum-exp.
struct RowSoftmax {
  float max, sum;
};
template <class S = Float32Storage>
TILESIM_HD RowSoftmax row_softmax(const typename S::type* row, std::int64_t cols) {
  RowSoftmax s{S::load(row[0]), 0.0f};
  for (std::int64_t j = 1; j < cols; ++j) s.max = S::load(row[j]) > s.max ? S::load(row[j]) : s.max;
  for (std::int64_t j = 0; j < cols; ++j) s.sum += expf(S::load(row[j]) - s.max);
  return s;
}

// The loss of each row into row_loss [rows], one row per item: cross entropy's logsumexp(x) - x[label],
// or mse's sum over the row of (x - t)^2; times the row's weight when row_weights [rows] is given.
// row_loss and row_weights are float32 in every dtype.
template <class S = Float32Storage>
TILESIM_HD void loss_rows_body(const ThreadIndex& t, LossFn fn, const typename S::type* x, std::int64_t rows, std::int64_t cols,
                               const std::int32_t* labels, const typename S::type* targets, float* row_loss,
                               const float* row_weights = nullptr) {
  for (std::int64_t r = t.global(); r < rows; r += t.stride()) {
    const typename S::type* row = x + r * cols;
    if (fn == LossFn::cross_entropy) {
      const RowSoftmax s = row_softmax<S>(row, cols);
      row_loss[r] = (s.max + logf(s.sum)) - S::load(row[labels[r]]);
    } else {
      float acc = 0.0f;
      for (std::int64_t j = 0; j < cols; ++j) {
        const float d = S::load(row[j]) - S::load(targets[r * cols + j]);
        acc += d * d;
      }
      row_loss[r] = acc;
    }
    if (row_weights != nullptr) row_loss[r] *= row_weights[r];
  }
}

// The row weights' sum into weight_sum[0], by one thread in row order (the weighted loss and gradient
// divide by it).
TILESIM_HD inline void weight_sum_body(const ThreadIndex& t, const float* row_weights, std::int64_t rows, float* weight_sum) {
  if (t.global() != 0) return;
  float acc = 0.0f;
  for (std::int64_t r = 0; r < rows; ++r) acc += row_weights[r];
  weight_sum[0] = acc;
}

// The mean over the rows' losses (cross entropy: over rows; mse: over every element), by one thread.
template <class S = Float32Storage>
TILESIM_HD void loss_mean_body(const ThreadIndex& t, const float* row_loss, std::int64_t rows, float count, typename S::type* out) {
  if (t.global() != 0) return;
  float acc = 0.0f;
  for (std::int64_t r = 0; r < rows; ++r) acc += row_loss[r];
  out[0] = S::store(acc / count);
}

// The weighted mean over the weighted rows' losses: their sum over (cols_per_term x the weights' sum),
// cols_per_term 1 for cross entropy and C for mse; 0 when the weights sum to 0 (an all-padding batch),
// not 0 / 0. By one thread, after weight_sum_body.
template <class S = Float32Storage>
TILESIM_HD void weighted_loss_mean_body(const ThreadIndex& t, const float* row_loss, std::int64_t rows, float cols_per_term,
                                        const float* weight_sum, typename S::type* out) {
  if (t.global() != 0) return;
  float acc = 0.0f;
  for (std::int64_t r = 0; r < rows; ++r) acc += row_loss[r];
  out[0] = S::store(weight_sum[0] > 0.0f ? acc / (cols_per_term * weight_sum[0]) : 0.0f);
}

// loss_grad, one row per item: cross entropy's (softmax - one-hot) / rows, mse's 2 (x - t) / (rows cols).
// With row_weights (and weight_sum, from weight_sum_body) row r's 1 / rows becomes w_r / sum w (mse's
// 2 / (rows cols) 2 w_r / (cols sum w)), and every row 0 when the weights sum to 0.
template <class S = Float32Storage>
TILESIM_HD void loss_grad_body(const ThreadIndex& t, LossFn fn, const typename S::type* x, std::int64_t rows, std::int64_t cols,
                               const std::int32_t* labels, const typename S::type* targets, typename S::type* out,
                               const float* row_weights = nullptr, const float* weight_sum = nullptr) {
  const float unweighted = fn == LossFn::cross_entropy ? 1.0f / static_cast<float>(rows) : 2.0f / static_cast<float>(rows * cols);
  for (std::int64_t r = t.global(); r < rows; r += t.stride()) {
    const typename S::type* row = x + r * cols;
    typename S::type* o = out + r * cols;
    float scale = unweighted;
    if (row_weights != nullptr) {
      const float sum = weight_sum[0];
      scale = !(sum > 0.0f)                  ? 0.0f
              : fn == LossFn::cross_entropy ? row_weights[r] / sum
                                            : (2.0f * row_weights[r]) / (static_cast<float>(cols) * sum);
    }
    if (fn == LossFn::cross_entropy) {
      const RowSoftmax s = row_softmax<S>(row, cols);
      for (std::int64_t j = 0; j < cols; ++j)
        o[j] = S::store((expf(S::load(row[j]) - s.max) / s.sum - (j == labels[r] ? 1.0f : 0.0f)) * scale);
    } else {
      for (std::int64_t j = 0; j < cols; ++j) o[j] = S::store(scale * (S::load(row[j]) - S::load(targets[r * cols + j])));
    }
  }
}

// An optimizer step's scalars, worked out on the host in double as torch.optim does in Python floats
// (the bias corrections of Adam's step t), then rounded to float for the per-element arithmetic.
struct OptimizerScalars {
  bool adam = false;
  float lr = 0, weight_decay = 0, momentum = 0;                       // sgd (momentum 0: no state)
  float beta1 = 0, beta2 = 0, one_minus_beta1 = 0, one_minus_beta2 = 0, eps = 0;
  float step_size = 0, inv_bias_correction2_sqrt = 0;                 // adam: lr / (1 - b1^t), 1 / sqrt(1 - b2^t)
};
inline OptimizerScalars optimizer_scalars(const OptimizerSpec& spec, double step) {
  OptimizerScalars s;
  s.adam = spec.kind == OptimizerSpec::Kind::adam;
  s.lr = static_cast<float>(spec.lr);
  s.weight_decay = static_cast<float>(spec.weight_decay);
  s.momentum = static_cast<float>(spec.momentum);
  s.beta1 = static_cast<float>(spec.beta1);
  s.beta2 = static_cast<float>(spec.beta2);
  s.one_minus_beta1 = static_cast<float>(1 - spec.beta1);
  s.one_minus_beta2 = static_cast<float>(1 - spec.beta2);
  s.eps = static_cast<float>(spec.eps);
  s.step_size = static_cast<float>(spec.lr / (1 - std::pow(spec.beta1, step)));
  s.inv_bias_correction2_sqrt = static_cast<float>(1 / std::sqrt(1 - std::pow(spec.beta2, step)));
  return s;
}

// optimizer_step, one parameter element per item: out [1 + S, count] = the new parameter, then the new
// state rows (sgd with momentum: the buffer; adam: m and v); `state` is [S, count] (null when S = 0).
// In a half dtype the parameter and the state are half: each new value is computed from the float32
// values of this step (the parameter from the unrounded m, v) and rounded once when stored.
template <class S = Float32Storage>
TILESIM_HD void optimizer_step_body(const ThreadIndex& t, const OptimizerScalars& s, const typename S::type* p, const typename S::type* g,
                                    const typename S::type* state, std::int64_t count, typename S::type* out) {
  for (std::int64_t i = t.global(); i < count; i += t.stride()) {
    // p[i] is read where the float32 kernel always read it (again after the state stores, which the
    // compiler cannot move it past), so the float32 instantiation is that kernel instruction for instruction.
    const float gi = S::load(g[i]) + s.weight_decay * S::load(p[i]);
    if (!s.adam) {
      if (s.momentum == 0.0f) {
        out[i] = S::store(S::load(p[i]) - s.lr * gi);
      } else {
        const float b = s.momentum * S::load(state[i]) + gi;
        out[count + i] = S::store(b);
        out[i] = S::store(S::load(p[i]) - s.lr * b);
      }
      continue;
    }
    const float m = s.beta1 * S::load(state[i]) + s.one_minus_beta1 * gi;
    const float v = s.beta2 * S::load(state[count + i]) + s.one_minus_beta2 * gi * gi;
    out[count + i] = S::store(m);
    out[2 * count + i] = S::store(v);
    out[i] = S::store(S::load(p[i]) - s.step_size * m / (sqrtf(v) * s.inv_bias_correction2_sqrt + s.eps));
  }
}

}  // namespace tilesim::kernels::cuda
