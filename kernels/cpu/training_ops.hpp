#pragma once
// The op kinds of a training step on the host CPU (definitions in ir/op_graph.hpp): derivatives of the
// unary functions, sums down to a broadcast shape, the loss and its gradient, and the optimizers'
// updates as torch.optim computes them. Elementwise loops split over threads as the forward kernels
// do (parallel::threads_for); per-row work keeps a row on one thread.
#include <cstdint>

#include "ir/op_graph.hpp"

namespace tilesim::kernels::cpu {

// out[i] = g[i] * f'(x[i]) for i in [0, count).
void unary_grad_f32(UnaryFn fn, float scalar, const float* x, const float* g, std::int64_t count, float* out);

// x [rows, cols] summed to [other_rows, other_groups] (other_rows 1 or rows; other_groups divides cols).
void sum_to_f32(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t other_rows, std::int64_t other_groups,
                float* out);

// The mean loss of predictions x [rows, cols] against labels (cross_entropy) or targets (mse) into
// out[0], and its gradient into out [rows, cols]. With row_weights [rows] (nullptr: every row weighs 1)
// the mean is weighted as ir/op_graph.hpp's LossFn says, and 0 (loss and gradient) when they sum to 0.
void loss_f32(LossFn fn, const float* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels,
              const float* targets, const float* row_weights, float* out);
void loss_grad_f32(LossFn fn, const float* x, std::int64_t rows, std::int64_t cols, const std::int32_t* labels,
                   const float* targets, const float* row_weights, float* out);

// One update of `count` parameters p with gradients g and state [S, count] (S = spec.state_rows()):
// out [1 + S, count] holds the new parameters, then the new state. `step` is Adam's t (1-based).
void optimizer_step_f32(const OptimizerSpec& spec, const float* p, const float* g, const float* state, double step,
                        std::int64_t count, float* out);

}  // namespace tilesim::kernels::cpu
