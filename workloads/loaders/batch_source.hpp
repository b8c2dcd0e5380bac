#pragma once
// The batches of a mini-batch workload, as its loader makes them on the host: the full graph (with its
// in-edge index and, for Cluster-GCN, its METIS clusters) or the dataset of small graphs is built once;
// then batch k of the run (epochs follow one another, each with its own shuffle) is sampled, cut from
// the clusters or collated on demand. Deterministic in the workload's seed.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "workloads/graphs/graph.hpp"
#include "workloads/loaders/batch.hpp"
#include "workloads/loaders/cluster_loader.hpp"
#include "workloads/loaders/fixed_size.hpp"
#include "workloads/loaders/graph_dataset.hpp"
#include "workloads/loaders/loader_spec.hpp"
#include "workloads/loaders/neighbor_sampler.hpp"

namespace tilesim::workloads {
struct Workload;
}

namespace tilesim::workloads::loaders {

class BatchSource {
 public:
  // Builds what every batch draws from. Throws InputError naming the workload file for a loader its graph
  // cannot serve (more parts than nodes, a fixed size no batch can fit, a single graph larger than it).
  explicit BatchSource(const Workload& workload);
  // The same graph, index, clusters or dataset as `base` (shared, not rebuilt) under another loader
  // setting or train section of the same workload (`tilesim fit` tries many batch sizes).
  BatchSource(const BatchSource& base, const Workload& workload);

  const LoaderSpec& spec() const { return spec_; }
  std::int64_t batches_per_epoch() const { return batches_per_epoch_; }
  // The batches a run makes: --batches (when given), else the loader's "batches", else one epoch.
  std::int64_t batches_to_run(std::optional<std::int64_t> override_batches) const;

  // Batch k of the run (0-based; batch batches_per_epoch() is the first of the second epoch).
  Batch make(std::int64_t k) const;

  // The full graph's nodes (0 for a dataset of graphs) and the node keys of a batch's nodes: the node of
  // the full graph, or for a dataset the graph's first node in the whole dataset plus the atom's position.
  std::int64_t full_graph_nodes() const { return full_graph_ ? full_graph_->num_nodes : 0; }
  // The seed candidates of a neighbour loader (the training nodes, or every node for inference).
  std::int64_t input_node_count() const { return static_cast<std::int64_t>(input_nodes_.size()); }
  std::vector<std::uint64_t> node_keys(const Batch& batch) const;

  // Whether node v of the full graph is in the training mask (node tasks of a training workload).
  bool is_training_node(std::int32_t v) const { return !training_.empty() && training_[static_cast<std::size_t>(v)]; }

  // The plan of epoch `epoch`: each batch's members (seed nodes, cluster parts or dataset graph ids),
  // before any sampling or collation; and one batch's real items in the throughput's unit
  // (epoch_work.hpp): its seeds, its clusters' nodes or its graphs.
  const std::vector<std::vector<std::int32_t>>& batch_plan(std::int64_t epoch) const { return epoch_members(epoch); }
  std::int64_t plan_items(const std::vector<std::int32_t>& members) const;

  // What building took on the host (graph generation, the in-edge index, METIS, the dataset's draw).
  double preprocess_s() const { return preprocess_s_; }
  std::string describe() const;  // one line: the loader, its graph or dataset, batches per epoch

 private:
  const std::vector<std::vector<std::int32_t>>& epoch_members(std::int64_t epoch) const;

  LoaderSpec spec_;
  std::uint64_t seed_ = 0;
  // Made once and shared by the sources derived from this one.
  std::shared_ptr<const graphs::EdgeList> full_graph_;
  std::shared_ptr<const NeighborIndex> index_;
  std::shared_ptr<const Clustering> clustering_;
  std::shared_ptr<const GraphDataset> dataset_;
  void select_nodes(const Workload& workload);  // input_nodes_ and training_ for the workload's train section
  void count_batches(const std::string& file);  // batches_per_epoch_
  std::vector<std::uint64_t> first_node_of_graph_;  // dataset: prefix sums of nodes_per_graph
  std::vector<std::int32_t> input_nodes_;           // neighbor: the seed candidates (training nodes, or every node)
  std::vector<bool> training_;                      // node tasks: the training mask over the full graph
  std::int64_t batches_per_epoch_ = 0;
  double preprocess_s_ = 0;
  // The members of the epoch last asked for (seeds, parts or graph ids per batch), kept so that the
  // batches of one epoch are cut from one shuffle.
  mutable std::int64_t cached_epoch_ = -1;
  mutable std::vector<std::vector<std::int32_t>> cached_members_;
};

}  // namespace tilesim::workloads::loaders
