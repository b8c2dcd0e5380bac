#include "models/ipu/machine/training_codelet_costs.hpp"

#include "common/integer_math.hpp"
#include "models/ipu/machine/codelet_costs.hpp"

namespace tilesim::ipu {

namespace {

std::int64_t vectors(std::int64_t elements, const CodeletCosts& c) { return ceil_div(elements, c.elementwise_elements_per_vector); }

// One elementwise vertex pass: its prologue and a cost per vector.
sim::Cycles pass(std::int64_t prologue, std::int64_t per_vector, std::int64_t elements, const CodeletCosts& c) {
  return prologue + vectors(elements, c) * per_vector;
}

}  // namespace

sim::Cycles unary_grad_worker_cycles(UnaryFn fn, std::int64_t elements, const CodeletCosts& c) {
  return pass(c.binary_prologue_worker_cycles,
              unary_worker_cycles_per_vector(fn, c) + c.binary_add_subtract_multiply_worker_cycles_per_vector, elements, c);
}

sim::Cycles scaled_add_worker_cycles(std::int64_t elements, const CodeletCosts& c) {
  return pass(c.scaled_add_prologue_worker_cycles, c.scaled_add_worker_cycles_per_vector, elements, c);
}

sim::Cycles optimizer_worker_cycles(const OptimizerSpec& spec, std::int64_t elements, const CodeletCosts& c) {
  const sim::Cycles scaled_add = scaled_add_worker_cycles(elements, c);
  const sim::Cycles multiply = binary_worker_cycles(BinaryFn::multiply, elements, c);
  sim::Cycles cycles = spec.weight_decay != 0 ? scaled_add : 0;
  if (spec.kind == OptimizerSpec::Kind::sgd) return cycles + (spec.momentum != 0 ? scaled_add : 0) + scaled_add;
  cycles += scaled_add;                                                         // m
  cycles += multiply + scaled_add;                                              // g * g, then v
  cycles += pass(c.unary_prologue_worker_cycles, c.unary_sqrt_worker_cycles_per_vector, elements, c);  // sqrt v
  cycles += multiply + binary_worker_cycles(BinaryFn::add, elements, c);        // / sqrt(1 - b2^t) + eps
  cycles += binary_worker_cycles(BinaryFn::divide, elements, c);                // m / denominator
  return cycles + scaled_add;                                                   // p -= step x ratio
}

sim::Cycles transpose_worker_cycles(std::int64_t elements, const CodeletCosts& c) {
  if (elements <= 0) return 0;
  return c.transpose_prologue_worker_cycles + elements * c.transpose_worker_cycles_per_element;
}

sim::Cycles cross_entropy_rows_worker_cycles(std::int64_t rows, std::int64_t classes, bool gradient, const CodeletCosts& c) {
  if (rows <= 0) return 0;
  const std::int64_t add = c.binary_add_subtract_multiply_worker_cycles_per_vector;
  // max, x - max, exp, sum: each a pass over the row's vectors.
  std::int64_t per_row = vectors(classes, c) * (c.binary_maximum_worker_cycles_per_vector + add +
                                                unary_worker_cycles_per_vector(UnaryFn::exp, c) + add);
  if (gradient) {
    // 1 / (sum M) once per row, the scale of every exponential, the one-hot subtract.
    per_row += unary_worker_cycles_per_vector(UnaryFn::reciprocal_or_zero, c) + vectors(classes, c) * add + add;
  } else {
    // log of the sum once per row, then the label's term added to the tile's partial loss.
    per_row += c.unary_log_worker_cycles_per_vector + add;
  }
  return c.unary_transcendental_prologue_worker_cycles + rows * per_row;
}

sim::Cycles mse_worker_cycles(std::int64_t elements, bool gradient, const CodeletCosts& c) {
  if (elements <= 0) return 0;
  const std::int64_t add = c.binary_add_subtract_multiply_worker_cycles_per_vector;
  return pass(c.binary_prologue_worker_cycles, gradient ? 2 * add : 3 * add, elements, c);
}

sim::Cycles loss_weight_worker_cycles(std::int64_t rows, bool gradient, const CodeletCosts& c) {
  if (rows <= 0) return 0;
  const sim::Cycles scale = binary_worker_cycles(BinaryFn::multiply, rows, c);
  return gradient ? scale : scale + reduce_worker_cycles(1, rows, c);
}

sim::Cycles weighted_mean_worker_cycles(const CodeletCosts& c) {
  return binary_worker_cycles(BinaryFn::multiply, 1, c) + binary_worker_cycles(BinaryFn::divide, 1, c) + select_worker_cycles(1, c);
}

}  // namespace tilesim::ipu
