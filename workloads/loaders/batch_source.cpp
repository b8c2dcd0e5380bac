#include "workloads/loaders/batch_source.hpp"

#include <chrono>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "common/error.hpp"
#include "workloads/loaders/batch_order.hpp"
#include "workloads/training/training_step.hpp"
#include "workloads/workload.hpp"

namespace tilesim::workloads::loaders {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::int32_t> iota_ids(std::int64_t n) {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(n));
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

}  // namespace

BatchSource::BatchSource(const Workload& workload) : spec_(*workload.model->loader), seed_(workload.seed) {
  const auto t0 = Clock::now();
  if (spec_.kind == LoaderSpec::Kind::graphs) {
    auto dataset = std::make_shared<GraphDataset>(make_dataset(*spec_.dataset, seed_));
    first_node_of_graph_.resize(dataset->nodes_per_graph.size() + 1, 0);
    for (std::size_t g = 0; g < dataset->nodes_per_graph.size(); ++g)
      first_node_of_graph_[g + 1] = first_node_of_graph_[g] + static_cast<std::uint64_t>(dataset->nodes_per_graph[g]);
    dataset_ = std::move(dataset);
  } else {
    auto graph = std::make_shared<graphs::EdgeList>(graphs::build(workload.model->graph, seed_));
    index_ = std::make_shared<NeighborIndex>(build_neighbor_index(*graph));
    if (spec_.kind == LoaderSpec::Kind::cluster) {
      if (spec_.num_parts > graph->num_nodes)
        throw InputError(workload.source_file, "loader.num_parts", "at most the graph's " + std::to_string(graph->num_nodes) + " nodes",
                         std::to_string(spec_.num_parts));
      clustering_ = std::make_shared<Clustering>(cluster_graph(*graph, spec_.num_parts, seed_));
    }
    full_graph_ = std::move(graph);
  }
  select_nodes(workload);
  count_batches(workload.source_file);
  preprocess_s_ = std::chrono::duration<double>(Clock::now() - t0).count();
}

BatchSource::BatchSource(const BatchSource& base, const Workload& workload)
    : spec_(*workload.model->loader),
      seed_(workload.seed),
      full_graph_(base.full_graph_),
      index_(base.index_),
      clustering_(base.clustering_),
      dataset_(base.dataset_),
      first_node_of_graph_(base.first_node_of_graph_) {
  if (spec_.kind != base.spec_.kind || spec_.num_parts != base.spec_.num_parts || seed_ != base.seed_ ||
      (spec_.dataset && base.spec_.dataset && spec_.dataset->num_graphs != base.spec_.dataset->num_graphs))
    throw std::logic_error("BatchSource: a derived source must keep the loader kind, parts, dataset and seed");
  select_nodes(workload);
  count_batches(workload.source_file);
}

void BatchSource::select_nodes(const Workload& workload) {
  if (!full_graph_) return;
  const auto& train = workload.model->train;
  const std::int64_t n = full_graph_->num_nodes;
  // The training mask, drawn once: the loss rows of a cluster batch, and NeighborLoader(input_nodes=
  // train_mask)'s seeds (every node for inference).
  const std::vector<std::int32_t> mask = train ? training::training_nodes(seed_, n, train->train_fraction) : std::vector<std::int32_t>{};
  training_.assign(train ? static_cast<std::size_t>(n) : 0, false);
  for (std::int32_t v : mask) training_[static_cast<std::size_t>(v)] = true;
  if (spec_.kind == LoaderSpec::Kind::neighbor) input_nodes_ = train ? mask : iota_ids(n);
}

void BatchSource::count_batches(const std::string& file) {
  try {
    batches_per_epoch_ = static_cast<std::int64_t>(epoch_members(0).size());
  } catch (const std::invalid_argument& e) {
    // The packers refuse a graph larger than the fixed size.
    throw InputError(file, "loader.fixed_size", "a fixed size every graph of the dataset fits", e.what());
  }
}

const std::vector<std::vector<std::int32_t>>& BatchSource::epoch_members(std::int64_t epoch) const {
  if (epoch == cached_epoch_) return cached_members_;
  std::vector<std::vector<std::int32_t>> members;
  switch (spec_.kind) {
    case LoaderSpec::Kind::neighbor:
      members = seed_batches(input_nodes_, spec_.batch_size, spec_.shuffle, seed_, epoch);
      break;
    case LoaderSpec::Kind::cluster:
      members = cluster_batches(spec_.num_parts, spec_.clusters_per_batch, spec_.shuffle, seed_, epoch);
      break;
    case LoaderSpec::Kind::graphs:
      if (spec_.packing == LoaderSpec::Packing::pad) {
        members = graph_batches(dataset_->spec.num_graphs, spec_.batch_size, spec_.shuffle, seed_, epoch);
      } else {
        // The packer sees the graphs in the epoch's order (one batch of every graph, shuffled or not).
        const auto order = graph_batches(dataset_->spec.num_graphs, dataset_->spec.num_graphs, spec_.shuffle, seed_, epoch).at(0);
        members = spec_.packing == LoaderSpec::Packing::lpfhp ? pack_lpfhp(*dataset_, order, *spec_.fixed_size)
                                                               : pack_stream(*dataset_, order, *spec_.fixed_size);
      }
      break;
  }
  cached_epoch_ = epoch;
  cached_members_ = std::move(members);
  return cached_members_;
}

std::int64_t BatchSource::plan_items(const std::vector<std::int32_t>& members) const {
  if (spec_.kind != LoaderSpec::Kind::cluster) return static_cast<std::int64_t>(members.size());
  std::int64_t nodes = 0;
  for (const std::int32_t part : members) nodes += static_cast<std::int64_t>(clustering_->nodes_of_part.at(static_cast<std::size_t>(part)).size());
  return nodes;
}

std::int64_t BatchSource::batches_to_run(std::optional<std::int64_t> override_batches) const {
  if (override_batches) return *override_batches;
  return spec_.batches.value_or(batches_per_epoch_);
}

Batch BatchSource::make(std::int64_t k) const {
  const std::int64_t epoch = k / batches_per_epoch_;
  const auto& members = epoch_members(epoch);
  const std::vector<std::int32_t>& m = members.at(static_cast<std::size_t>(k % batches_per_epoch_));
  switch (spec_.kind) {
    case LoaderSpec::Kind::neighbor:
      // Each batch samples from its own stream, so batch k is the same however many came before.
      return sample_neighbors(*index_, m, spec_.fanouts, spec_.replace, batch_seed(seed_, epoch, k % batches_per_epoch_));
    case LoaderSpec::Kind::cluster: return cluster_batch(*index_, *clustering_, m);
    case LoaderSpec::Kind::graphs: return collate(*dataset_, m);
  }
  throw std::logic_error("BatchSource::make: unknown loader kind");
}

std::vector<std::uint64_t> BatchSource::node_keys(const Batch& batch) const {
  std::vector<std::uint64_t> keys;
  keys.reserve(static_cast<std::size_t>(batch.graph.num_nodes));
  if (spec_.kind != LoaderSpec::Kind::graphs) {
    for (std::int32_t v : batch.global_nodes) keys.push_back(static_cast<std::uint64_t>(v));
    return keys;
  }
  // Graph by graph, atoms in order: the batch's nodes are its graphs' nodes, block after block.
  for (std::int32_t g : batch.graph_ids) {
    const std::uint64_t first = first_node_of_graph_[static_cast<std::size_t>(g)];
    for (std::int32_t a = 0; a < dataset_->nodes_per_graph[static_cast<std::size_t>(g)]; ++a) keys.push_back(first + static_cast<std::uint64_t>(a));
  }
  return keys;
}

std::string BatchSource::describe() const {
  std::ostringstream out;
  out << to_string(spec_.kind) << " loader";
  switch (spec_.kind) {
    case LoaderSpec::Kind::neighbor: {
      out << " (batch_size " << spec_.batch_size << ", fanouts [";
      for (std::size_t i = 0; i < spec_.fanouts.size(); ++i) out << (i ? ", " : "") << spec_.fanouts[i];
      out << "]) over " << input_nodes_.size() << " seed nodes of a graph of " << full_graph_->num_nodes << " nodes and "
          << full_graph_->num_edges() << " edges";
      break;
    }
    case LoaderSpec::Kind::cluster:
      out << " (" << spec_.num_parts << " METIS parts, " << spec_.clusters_per_batch << " per batch) over a graph of "
          << full_graph_->num_nodes << " nodes and " << full_graph_->num_edges() << " edges";
      break;
    case LoaderSpec::Kind::graphs:
      out << " (" << to_string(spec_.packing);
      if (spec_.packing == LoaderSpec::Packing::pad) out << ", batch_size " << spec_.batch_size;
      out << ") over " << dataset_->spec.num_graphs << " " << to_string(dataset_->spec.kind)
          << (dataset_->spec.kind == DatasetKind::uniform ? " graphs of " + std::to_string(dataset_->spec.min_nodes) + " to " +
                                                               std::to_string(dataset_->spec.max_nodes) + " nodes"
                                                         : std::string("-like graphs"));
      break;
  }
  out << ": " << batches_per_epoch_ << " batches per epoch";
  return out.str();
}

}  // namespace tilesim::workloads::loaders
