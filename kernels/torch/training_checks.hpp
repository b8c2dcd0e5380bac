#pragma once
// The checks of a training step the torch-cpu peer ran with autograd and torch::optim, on the values it
// computed (no libtorch here, so tests can hand these checks altered values):
//  - every op torch ran itself (forward ops, the loss, the gradient ops, the optimizer updates) against
//    the reference, from the operands torch computed (reference::verify, its stated float32 bounds);
//  - every parameter's autograd gradient against the graph's own gradient of it, which the reference
//    evaluates by running the graph's loss_grad and backward ops from torch's forward values.
// The second check makes autograd an oracle for the lowered backward pass, and the lowered pass one for
// autograd: each computes the same derivative by an independent route.
#include <string>

#include "ir/reference/reference.hpp"
#include "ir/tensor_values.hpp"
#include "kernels/torch/training_graph.hpp"

namespace tilesim::kernels::torch_peer {

// Autograd and the graph's backward ops add the same products in different orders and groupings (a
// weight's gradient is one matmul in autograd, per-consumer partial sums accumulated in the graph), so
// an element-wise bound would need the magnitudes of every intermediate term, which neither side keeps.
// The bound is relative to the gradient's largest magnitude instead: each element within
// kGradientRelativeBound * max|reference gradient of that parameter|. A float32 sum of n terms is within
// about n * 2^-24 of the sum of its terms' magnitudes in the worst case and sqrt(n) * 2^-24 typically;
// the sums of a GNN step run over up to ~10^5 edges or rows, several chained. Measured on the five
// training examples (3 steps each), the largest difference is 1.3e-5 of the largest magnitude (GIN,
// whose nearly saturated softmax rows torch's float32 log-softmax backward rounds), most are below
// 10^-6; 2^-12 (2.4e-4) leaves a margin of more than 10 over that, while a gradient off by a factor
// (a term missing, doubled or scaled) by more than 2.4e-4 of its scale fails.
inline constexpr double kGradientRelativeBound = 0x1p-12;
// A half model's step (mixed precision): autograd's backward and the graph's backward ops each round every
// intermediate gradient in the model's dtype, at their own points (autograd accumulates a tensor's
// gradients in its own order, fuses or splits calls), so the two part by a few roundings of the dtype,
// not of float32: the bound is 32 u of the largest magnitude (u the dtype's unit roundoff), 2^-6 for
// float16 and 2^-3 for bfloat16, where the bfloat16 SchNet and GCN examples part by at most 0.0067 of the
// largest magnitude (1.7 u). A gradient off by a factor of 2, or missing or doubling a term of its scale,
// still fails.
// Where this host's libtorch keeps a half matmul's partial sums in the half dtype itself (libtorch 1.13's
// own gemm on a CPU without AVX-512: accumulation_probe.hpp), autograd's weight gradients, each a sum over
// every row or edge of the batch, carry rounding that grows with that count: measured on an AMD EPYC with
// AVX2 alone, the bfloat16 SchNet example's autograd gradients part from the graph's by up to 0.8 of the
// largest magnitude. No bound of the gradient's scale holds them, and one large enough to would pass
// anything, so such a step's gradients are compared and the difference reported, but not checked.

struct PhaseCheck {
  bool ok = true;
  bool checked = true;  // false: compared and reported, not held to a bound (the row's verified is then unset)
  std::string detail;   // what was checked and how it came out; the failures by name
};

// Each op of `ops` (indices into graph.ops) verified against the reference, operands from `computed`
// where it holds them, else from `inputs`. `what` names the ops in the text ("forward ops");
// `accumulation` how torch adds up half matmuls on this host (accumulation_probe.hpp).
PhaseCheck check_ops(const OpGraph& graph, const std::vector<std::size_t>& ops, const TensorValues& inputs,
                     const TensorValues& computed, const std::string& what, const reference::Accumulation& accumulation = {});

// Each parameter's gradient in `computed` (at plan.parameters[i].grad, as autograd left it) against the
// graph's gradient tensor evaluated by the reference: plan.replaced_ops run through reference::compute
// from `inputs` and torch's forward outputs in `computed`. Within gradient_relative_bound(plan.model_dtype)
// of the largest magnitude, above (kGradientRelativeBound for a float32 model); a half model's autograd
// gradients are compared unscaled (the graph's casts back to its master weights carry 1 / loss_scale).
// With `accumulation` saying the model's half dtype adds its products in itself, the same comparison is
// made and reported unchecked (PhaseCheck::checked false), as above.
PhaseCheck check_gradients(const OpGraph& graph, const TrainingStepPlan& plan, const TensorValues& inputs,
                           const TensorValues& computed, const reference::Accumulation& accumulation = {});

}  // namespace tilesim::kernels::torch_peer
