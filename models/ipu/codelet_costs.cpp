#include "models/ipu/codelet_costs.hpp"

#include "models/ipu/blocks.hpp"

namespace tilesim::ipu {

sim::Cycles multislice_worker_cycles(std::int64_t in_range, std::int64_t out_of_range, std::int64_t row_elements,
                                     const CodeletCosts& c) {
  const std::int64_t copy = ceil_div(row_elements, c.multislice_elements_per_vector) * c.multislice_cycles_per_vector;
  return c.multislice_prologue_worker_cycles + in_range * (c.multislice_in_range_worker_cycles + copy) +
         out_of_range * c.multislice_out_of_range_worker_cycles;
}

sim::Cycles multiupdateadd_worker_cycles(std::int64_t in_range, std::int64_t out_of_range, std::int64_t row_elements,
                                         const CodeletCosts& c) {
  const std::int64_t per_row =
      c.multiupdateadd_in_range_worker_cycles + (row_elements - 1) * c.multiupdateadd_per_extra_element_worker_cycles;
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

}  // namespace tilesim::ipu
