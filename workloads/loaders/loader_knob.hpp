#pragma once
// A loader's batch size as one number, for the commands that vary it (`tilesim fit` searches it, a
// batch-size sweep steps through it): batch_size for neighbour sampling and padded graphs,
// clusters_per_batch for Cluster-GCN, and for packed graphs the fixed size's num_nodes (num_edges and
// num_graphs scaled in proportion).
#include <cstdint>
#include <string>

#include "workloads/loaders/loader_spec.hpp"

namespace tilesim::workloads::loaders {

struct BatchKnob {
  std::string name;       // "batch_size", "clusters_per_batch" or "fixed_size.num_nodes"
  std::int64_t value = 1; // the loader's own value
};
BatchKnob batch_knob(const LoaderSpec& spec);

// `spec` with its knob at `value`. Padded graphs drop the loader's fixed size (each batch size pads to
// its own largest batch); packed graphs scale num_edges and num_graphs with num_nodes.
LoaderSpec with_batch_knob(const LoaderSpec& spec, std::int64_t value);

}  // namespace tilesim::workloads::loaders
