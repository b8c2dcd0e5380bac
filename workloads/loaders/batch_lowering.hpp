#pragma once
// One mini-batch as a step of the model: its graph lowered to the op graph (the forward pass, or the
// whole training step with the batch's loss rows), in the batch's exact shape or padded to the fixed
// shape a compiled program needs (PopTorch's fixed-size batches on the IPU). Padding is neutral: padding
// edges join padding nodes only and padding rows weigh 0 in the loss, so a padded step computes the
// loss and gradients of the exact one, and only its cost differs.
#include <cstdint>
#include <optional>
#include <vector>

#include "workloads/loaders/batch.hpp"
#include "workloads/loaders/batch_source.hpp"
#include "workloads/loaders/fixed_size.hpp"
#include "workloads/workload.hpp"

namespace tilesim::workloads::loaders {

// The fixed shape of a run's padded steps: the graph's size, and for node tasks the loss rows (the seed
// rows of a neighbour batch, every node of a cluster batch), so that every padded step is one program.
struct PaddedShape {
  FixedSize size;
  std::int64_t loss_rows = 0;
  bool from_loader = false;  // the loader's "fixed_size"; else the largest batch of the run
};

// The loader's fixed size, or the largest of `batches` (one more node and graph than the largest, to
// hold the padding graph), with the loss rows each kind needs.
PaddedShape padded_shape(const BatchSource& source, const std::vector<Batch>& batches);

// What one step holds of real work and of padding.
struct BatchShape {
  std::int64_t nodes = 0, edges = 0, graphs = 0;  // real
  std::int64_t loss_rows = 0;                     // real rows in the loss (0 for inference)
  std::int64_t seed_nodes = 0;                    // neighbour batches: the seeds (the batch's throughput unit)
  std::int64_t host_input_bytes = 0;              // what the host sends for the step (layers::host_input_bytes)
  Padding padding;                                // zero padding for an exact step
};

struct LoweredBatch {
  Instance instance;
  BatchShape shape;
};

// Lowers batch `k` of the run (`batch`, as source.make(k) made it) for `workload` (a model with a
// loader): exact when `padded` is empty, else padded to it. Throws InputError naming the workload file
// and loader.fixed_size when the batch does not fit the loader's fixed size. `with_values` false: the op
// graph alone, no input values (planning only).
LoweredBatch lower_batch(const Workload& workload, const BatchSource& source, std::int64_t k, Batch batch,
                         const std::optional<PaddedShape>& padded, bool with_values = true);

}  // namespace tilesim::workloads::loaders
