#include "models/ipu/machine/codelet_costs.hpp"

#include "common/integer_math.hpp"

namespace tilesim::ipu {

sim::Cycles multislice_worker_cycles(std::int64_t in_range, std::int64_t out_of_range, std::int64_t row_elements,
                                     const CodeletCosts& c) {
  const std::int64_t copy = ceil_div(row_elements, c.multislice_elements_per_vector) * c.multislice_cycles_per_vector;
  return c.multislice_prologue_worker_cycles + in_range * (c.multislice_in_range_worker_cycles + copy) +
         out_of_range * c.multislice_out_of_range_worker_cycles;
}

sim::Cycles multiupdateadd_worker_cycles(std::int64_t in_range, std::int64_t out_of_range, std::int64_t row_elements,
                                         const CodeletCosts& c) {
  // A row is added in 4-byte atoms; a 16-bit row of odd length takes the sub-word path instead.
  const bool subword = c.multiupdateadd_subword_write_worker_cycles_per_element > 0 &&
                       row_elements % c.multiupdateadd_elements_per_atom != 0;
  const std::int64_t per_row =
      subword ? c.multiupdateadd_in_range_worker_cycles + row_elements * c.multiupdateadd_subword_write_worker_cycles_per_element
              : c.multiupdateadd_in_range_worker_cycles +
                    (ceil_div(row_elements, c.multiupdateadd_elements_per_atom) - 1) * c.multiupdateadd_per_extra_element_worker_cycles;
  return c.multiupdateadd_prologue_worker_cycles + in_range * per_row +
         out_of_range * c.multiupdateadd_out_of_range_worker_cycles;
}

sim::Cycles fill_worker_cycles(std::int64_t bytes, const CodeletCosts& c) {
  return c.fill_prologue_worker_cycles + ceil_div(bytes, c.fill_bytes_per_worker_cycle);
}

sim::Cycles index_transform_worker_cycles(std::int64_t elements, const CodeletCosts& c) {
  return c.index_transform_prologue_worker_cycles + elements * c.index_transform_worker_cycles_per_element;
}

sim::Cycles reduce_worker_cycles(std::int64_t output_elements, std::int64_t partials, const CodeletCosts& c) {
  const std::int64_t vectors = ceil_div(output_elements, c.reduce_elements_per_vector);
  return c.reduce_prologue_worker_cycles +
         vectors * (c.reduce_per_vector_worker_cycles + (partials - 1) * c.reduce_per_partial_worker_cycles);
}

bool unary_is_transcendental(UnaryFn fn) {
  switch (fn) {
    case UnaryFn::relu:
    case UnaryFn::leaky_relu:
    case UnaryFn::scale:
    case UnaryFn::clamp_min: return false;
    case UnaryFn::shifted_softplus:
    case UnaryFn::softplus:
    case UnaryFn::sigmoid:
    case UnaryFn::sqrt:
    case UnaryFn::log:
    case UnaryFn::exp:
    case UnaryFn::rsqrt_or_zero:
    case UnaryFn::reciprocal_or_zero:
    case UnaryFn::cosine_cutoff: return true;
  }
  return true;
}

sim::Cycles unary_worker_cycles_per_vector(UnaryFn fn, const CodeletCosts& c) {
  switch (fn) {
    case UnaryFn::relu: return c.unary_relu_worker_cycles_per_vector;
    case UnaryFn::leaky_relu: return c.unary_leaky_relu_worker_cycles_per_vector;
    case UnaryFn::shifted_softplus: return c.unary_shifted_softplus_worker_cycles_per_vector;
    case UnaryFn::exp: return c.unary_exp_worker_cycles_per_vector;
    case UnaryFn::scale: return c.unary_scale_worker_cycles_per_vector;
    case UnaryFn::rsqrt_or_zero: return c.unary_rsqrt_or_zero_worker_cycles_per_vector;
    case UnaryFn::reciprocal_or_zero: return c.unary_reciprocal_or_zero_worker_cycles_per_vector;
    case UnaryFn::cosine_cutoff: return c.unary_cosine_cutoff_worker_cycles_per_vector;
    case UnaryFn::softplus: return c.unary_softplus_worker_cycles_per_vector;
    case UnaryFn::sigmoid: return c.unary_sigmoid_worker_cycles_per_vector;
    // poplibs' SQRT and LOGARITHM (the figures Adam's denominator and the cross entropy use), and MAXIMUM
    // with the scalar for clamp_min.
    case UnaryFn::sqrt: return c.unary_sqrt_worker_cycles_per_vector;
    case UnaryFn::log: return c.unary_log_worker_cycles_per_vector;
    case UnaryFn::clamp_min: return c.binary_maximum_worker_cycles_per_vector;
  }
  return c.unary_cosine_cutoff_worker_cycles_per_vector;
}

sim::Cycles unary_worker_cycles(UnaryFn fn, std::int64_t elements, const CodeletCosts& c) {
  const std::int64_t prologue =
      unary_is_transcendental(fn) ? c.unary_transcendental_prologue_worker_cycles : c.unary_prologue_worker_cycles;
  return prologue + ceil_div(elements, c.elementwise_elements_per_vector) * unary_worker_cycles_per_vector(fn, c);
}

sim::Cycles binary_worker_cycles(BinaryFn fn, std::int64_t elements, const CodeletCosts& c) {
  const std::int64_t per_vector =
      fn == BinaryFn::divide ? c.binary_divide_worker_cycles_per_vector : c.binary_add_subtract_multiply_worker_cycles_per_vector;
  return c.binary_prologue_worker_cycles + ceil_div(elements, c.elementwise_elements_per_vector) * per_vector;
}

sim::Cycles cast_worker_cycles(DType from, DType to, bool scale, std::int64_t elements, const CodeletCosts& c) {
  const sim::Cycles scaling = unary_worker_cycles(UnaryFn::scale, elements, c);
  if (from == to) return scaling;
  const bool narrowing = dtype_bytes(to) < dtype_bytes(from);
  const std::int64_t per_vector = narrowing ? c.cast_narrowing_elements_per_vector : c.cast_widening_elements_per_vector;
  const std::int64_t cycles = narrowing ? c.cast_narrowing_worker_cycles_per_vector : c.cast_widening_worker_cycles_per_vector;
  return c.cast_prologue_worker_cycles + ceil_div(elements, per_vector) * cycles + (scale ? scaling : 0);
}

sim::Cycles select_worker_cycles(std::int64_t elements, const CodeletCosts& c) {
  return unary_worker_cycles(UnaryFn::relu, elements, c);
}

sim::Cycles amp_matmul_tile_cycles(std::int64_t m, std::int64_t k, std::int64_t n, const CodeletCosts& c) {
  if (m <= 0 || k <= 0 || n <= 0) return 0;
  return c.amp_vertex_fixed_cycles + ceil_div(2 * m * k * n, c.amp_flops_per_tile_cycle);
}

}  // namespace tilesim::ipu
