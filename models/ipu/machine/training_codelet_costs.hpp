#pragma once
// Worker-cycle costs of the codelets a training step adds (the backward's derivatives and transposes,
// the loss, the optimizers' updates), composed from the machine file's constants the way poplibs and
// PopART build these ops out of popops vertices. Pure functions, like codelet_costs.hpp; where a cost is
// a composition made by tilesim (no single poplibs estimator covers it), the comment says which
// vertices it adds up.
#include <cstdint>

#include "ir/op_graph.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "sim/machine_config.hpp"

namespace tilesim::ipu {

// grad * f'(x) on one worker for `elements` floats: a two-operand vertex (BinaryOp1D's prologue) whose
// per vector cost is the derivative's, taken as f's own (each derivative uses the same library routine
// as its function: a select for relu, exp for exp and softplus's sigmoid, sin for the cosine cutoff's
// cos, ...), plus the multiply by grad.
sim::Cycles unary_grad_worker_cycles(UnaryFn fn, std::int64_t elements, const CodeletCosts& c);

// popops ScaledAdd (a += s b, or aXPlusbY) over `elements` floats on one worker.
sim::Cycles scaled_add_worker_cycles(std::int64_t elements, const CodeletCosts& c);

// One optimizer update of `elements` parameters on one worker, as the sequence of elementwise vertices
// PopART runs it as (each with its own prologue):
//   sgd:  [weight decay: ScaledAdd g += wd p] [momentum: ScaledAdd b = mu b + g] ScaledAdd p -= lr (b or g)
//   adam: [weight decay: ScaledAdd] ScaledAdd m; multiply g * g; ScaledAdd v; sqrt v; multiply and add
//         for the denominator (2 BinaryOps); divide m / denominator; ScaledAdd p -= step x ratio.
sim::Cycles optimizer_worker_cycles(const OptimizerSpec& spec, std::int64_t elements, const CodeletCosts& c);

// Transposing `elements` floats of a block on one worker (poplin's Transpose2d, the worker's share).
sim::Cycles transpose_worker_cycles(std::int64_t elements, const CodeletCosts& c);

// Cross entropy over `rows` whole rows of `classes` logits on one worker: per row a max pass
// (MAXIMUM), x - max, exp and their sum (SUBTRACT, EXPONENT, ADD), then the log of the sum and the
// label's term (LOGARITHM, ADD); the gradient instead scales the exponentials by 1 / (sum M)
// (INVERSE, MULTIPLY) and subtracts the one-hot label.
sim::Cycles cross_entropy_rows_worker_cycles(std::int64_t rows, std::int64_t classes, bool gradient, const CodeletCosts& c);

// Mean squared error over `elements` on one worker: x - t, its square and the running sum
// (SUBTRACT, MULTIPLY, ADD); the gradient 2 (x - t) / n (SUBTRACT, MULTIPLY).
sim::Cycles mse_worker_cycles(std::int64_t elements, bool gradient, const CodeletCosts& c);

// What per-row loss weights (Op::aux) add to a loss worker over `rows` rows (mse: the rows its elements
// touch): each row's term times its weight, a MULTIPLY pass over the rows (the row's loss, or the
// gradient's row scale w_r / sum w in place of 1 / M, whose reciprocal is costed already); the forward
// pass also sums the rows' weights beside the losses (a Reduce of `rows` partials into one output).
sim::Cycles loss_weight_worker_cycles(std::int64_t rows, bool gradient, const CodeletCosts& c);

// The weighted mean from the loss's two sums, on one worker: sum w l / (D sum w) with D = 1 or C
// (MULTIPLY, DIVIDE), and 0 in place of 0 / 0 where the weights sum to 0 (a select).
sim::Cycles weighted_mean_worker_cycles(const CodeletCosts& c);

}  // namespace tilesim::ipu
