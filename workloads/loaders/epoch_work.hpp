#pragma once
// What a loader's epoch carries, counted in the unit its throughput is given in: seed nodes for a
// neighbour loader (their predictions are what a batch computes), the chosen clusters' nodes for a
// cluster loader, graphs for a dataset of graphs. Counted from the epoch's batch plan (the seeds, parts
// or graph ids of every batch, packing included), so no batch is sampled or collated: a throughput is
// the epoch's items over the epoch's time, never whichever batches happen to come first.
#include <cstdint>
#include <string>

#include "workloads/loaders/batch_lowering.hpp"
#include "workloads/loaders/batch_source.hpp"
#include "workloads/loaders/loader_spec.hpp"

namespace tilesim::workloads::loaders {

// "seed_nodes", "nodes" or "graphs".
std::string throughput_unit(LoaderSpec::Kind kind);

// One lowered batch's real items in that unit (padding excluded).
double batch_items(const BatchShape& shape, LoaderSpec::Kind kind);

struct EpochWork {
  std::int64_t batches = 0;  // batches in the epoch
  std::int64_t items = 0;    // real items over all of them, in throughput_unit
  std::string unit;
  double items_per_batch() const { return batches > 0 ? static_cast<double>(items) / static_cast<double>(batches) : 0.0; }
  // One line for reports: what a throughput counts.
  std::string counts() const;
};

// Epoch `epoch` (0-based) of `source`.
EpochWork epoch_work(const BatchSource& source, std::int64_t epoch = 0);

}  // namespace tilesim::workloads::loaders
