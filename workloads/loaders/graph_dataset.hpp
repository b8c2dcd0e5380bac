#pragma once
// Datasets of small graphs (molecules, water clusters) for graph-level training: each graph's size is
// drawn once from the dataset's distribution (graph_sizes.json beside this file) and each graph's
// atoms and edges from a stream of its own, so a graph is the same in whichever batch it lands.
// Batches are PyG's DataLoader collation: the graphs block-diagonal, with the `batch` vector.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/loaders/batch.hpp"

namespace tilesim::workloads::loaders {

enum class DatasetKind { qm9, water, uniform };
struct DatasetSpec {
  DatasetKind kind = DatasetKind::qm9;
  std::int64_t num_graphs = 0;                   // graphs in the dataset
  bool knn = false;                              // connectivity: complete (default) or k nearest neighbours
  std::int64_t k = 0;
  std::int64_t min_waters = 3, max_waters = 30;  // water: clusters of n water molecules = 3n atoms, n uniform in [min, max]
  std::int64_t min_nodes = 0, max_nodes = 0;     // uniform: node counts uniform in [min_nodes, max_nodes] (a TUDataset's range)
};
struct GraphDataset {
  DatasetSpec spec;
  std::uint64_t seed = 0;
  std::vector<std::int32_t> nodes_per_graph;  // drawn at construction, deterministic in seed
  std::int64_t edges_of(std::int32_t graph) const;  // complete: n(n-1); knn: n * min(k, n-1)
  std::int64_t num_graphs() const { return static_cast<std::int64_t>(nodes_per_graph.size()); }
};
// qm9: atom counts drawn from the QM9 histogram of graph_sizes.json; water: 3n atoms, n uniform in
// [min_waters, max_waters]; uniform: n uniform in [min_nodes, max_nodes]. Throws std::invalid_argument
// for an impossible spec (negative counts, knn with k < 1, bounds out of order or below 1),
// tilesim::InputError for an unreadable sizes file.
GraphDataset make_dataset(const DatasetSpec& spec, std::uint64_t seed);

// The graphs, block-diagonal, in the order given: graph_of_node = position in `graph_ids`, num_graphs
// = graph_ids.size(), graph_ids kept, global_nodes empty. Each graph's atoms sit at uniform 3-D
// positions drawn from a stream keyed on (dataset seed, graph id); its edges are every ordered pair
// (complete) or the k nearest sources of each atom (knn), flow source_to_target, ordered by
// destination (graphs::append_molecule, as graphs::molecules makes them). A graph id may repeat.
Batch collate(const GraphDataset& dataset, const std::vector<std::int32_t>& graph_ids);

// Batches of dataset graph ids: 0..num_graphs-1 (shuffled when `shuffle`, by a stream keyed on seed
// and epoch) in groups of batch_size.
std::vector<std::vector<std::int32_t>> graph_batches(std::int64_t num_graphs, std::int64_t batch_size, bool shuffle,
                                                     std::uint64_t seed, std::int64_t epoch);

// The sizes file (TILESIM_GRAPH_SIZES names another).
std::string graph_sizes_file();

}  // namespace tilesim::workloads::loaders
