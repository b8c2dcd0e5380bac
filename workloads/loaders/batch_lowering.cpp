#include "workloads/loaders/batch_lowering.hpp"

#include <algorithm>
#include <stdexcept>

#include "common/error.hpp"
#include "workloads/layers/layers.hpp"
#include "workloads/random_streams.hpp"
#include "workloads/training/training_step.hpp"

namespace tilesim::workloads::loaders {

namespace {

std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(v); }

// The loss rows of a node batch and the key of each row's label (the node of the full graph). Exact:
// the seeds (neighbour) or the batch's training nodes (cluster). Padded: a fixed count of rows, those
// beyond the real ones pointing at row 0 with weight 0 (neighbour), or every row of the padded batch
// weighted by whether it is a real training node (cluster).
training::GivenReadout node_readout(const BatchSource& source, const Batch& batch, const BatchShape& shape,
                                    const std::optional<PaddedShape>& padded) {
  training::GivenReadout r;
  const auto key_of = [&](std::int64_t row) { return static_cast<std::uint64_t>(batch.global_nodes[sz(row)]); };
  if (source.spec().kind == LoaderSpec::Kind::neighbor) {
    const std::int64_t rows = padded ? padded->loss_rows : batch.num_seed_nodes;
    for (std::int64_t i = 0; i < rows; ++i) {
      const bool real = i < batch.num_seed_nodes;
      r.rows.push_back(real ? static_cast<std::int32_t>(i) : 0);
      r.keys.push_back(real ? key_of(i) : 0);
      if (padded) r.weights.push_back(real ? 1.0f : 0.0f);
    }
    return r;
  }
  if (padded) {
    for (std::int64_t i = 0; i < padded->loss_rows; ++i) {
      const bool real = i < shape.nodes && source.is_training_node(batch.global_nodes[sz(i)]);
      r.rows.push_back(static_cast<std::int32_t>(i));
      r.keys.push_back(real ? key_of(i) : 0);
      r.weights.push_back(real ? 1.0f : 0.0f);
    }
    return r;
  }
  for (std::int64_t i = 0; i < shape.nodes; ++i)
    if (source.is_training_node(batch.global_nodes[sz(i)])) {
      r.rows.push_back(static_cast<std::int32_t>(i));
      r.keys.push_back(key_of(i));
    }
  if (r.rows.empty()) {
    // A cluster batch without a training node: one row of weight 0, so the step is still a step (its loss
    // and gradients are 0, where PyTorch's mean over no rows would be NaN).
    r.rows.push_back(0);
    r.keys.push_back(0);
    r.weights.push_back(0.0f);
  }
  return r;
}

// The graph rows of a batch of small graphs: the dataset graph of each real one, weight 0 for padding graphs.
training::GivenReadout graph_readout(const Batch& batch, const BatchShape& shape, bool padded) {
  training::GivenReadout r;
  for (std::int64_t g = 0; g < batch.graph.num_graphs; ++g) {
    const bool real = g < shape.graphs;
    r.keys.push_back(real ? static_cast<std::uint64_t>(batch.graph_ids[sz(g)]) : 0);
    if (padded) r.weights.push_back(real ? 1.0f : 0.0f);
  }
  return r;
}

}  // namespace

PaddedShape padded_shape(const BatchSource& source, const std::vector<Batch>& batches) {
  PaddedShape p;
  const LoaderSpec& spec = source.spec();
  std::int64_t nodes = 0, edges = 0, graphs = 0, seeds = 0;
  for (const Batch& b : batches) {
    nodes = std::max(nodes, b.graph.num_nodes);
    edges = std::max(edges, b.graph.num_edges());
    graphs = std::max(graphs, b.graph.num_graphs);
    seeds = std::max(seeds, b.num_seed_nodes);
  }
  if (spec.fixed_size) {
    p.size = *spec.fixed_size;
    p.from_loader = true;
  } else {
    // One node and one graph beyond the largest batch hold the padding (PopTorch Geometric's padding graph).
    p.size.num_nodes = nodes + 1;
    p.size.num_edges = edges;
    p.size.num_graphs = spec.kind == LoaderSpec::Kind::graphs ? graphs + 1 : 0;
  }
  if (spec.kind == LoaderSpec::Kind::neighbor) p.loss_rows = p.from_loader ? spec.batch_size : seeds;
  if (spec.kind == LoaderSpec::Kind::cluster) p.loss_rows = p.size.num_nodes;
  return p;
}

LoweredBatch lower_batch(const Workload& workload, const BatchSource& source, std::int64_t k, Batch batch,
                         const std::optional<PaddedShape>& padded, bool with_values) {
  const ModelSpec& model = *workload.model;
  LoweredBatch out;
  BatchShape& shape = out.shape;
  shape.nodes = batch.graph.num_nodes;
  shape.edges = batch.graph.num_edges();
  shape.graphs = batch.graph.num_graphs;
  shape.seed_nodes = batch.num_seed_nodes;
  std::vector<std::uint64_t> keys = source.node_keys(batch);
  if (padded) {
    try {
      shape.padding = pad_to_fixed_size(batch, padded->size);
    } catch (const std::invalid_argument& e) {
      throw InputError(workload.source_file, "loader.fixed_size",
                       std::string("a fixed size every batch fits (") + (padded->from_loader ? "the loader's" : "the largest batch's") + ")",
                       "batch " + std::to_string(k + 1) + " of " + std::to_string(shape.nodes) + " nodes, " +
                           std::to_string(shape.edges) + " edges and " + std::to_string(shape.graphs) + " graphs: " + e.what());
    }
  }

  OpGraph& graph = out.instance.graph;
  std::vector<layers::InputFill> fills;
  layers::Lowering l(graph, fills, batch.graph, workload.seed);
  l.source_file = workload.source_file;
  l.value_dtype = model.dtype;
  if (model.train) {
    const bool graph_task = model.train->task == training::TrainSpec::Task::graph;
    const training::GivenReadout given = graph_task ? graph_readout(batch, shape, padded.has_value())
                                                    : node_readout(source, batch, shape, padded);
    for (float w : given.weights) shape.loss_rows += w > 0 ? 1 : 0;
    if (given.weights.empty()) shape.loss_rows = static_cast<std::int64_t>(given.keys.size());
    out.instance.training =
        training::lower_training_step(l, fills, model.layers, model.num_features, *model.train, workload.seed, "train", &given);
  } else {
    layers::lower_model(l, model.layers, model.num_features);
  }

  // A mini-batch's edges and rows change every batch: they are data of the step, not indices a program
  // could compile into its exchange (as ipu:MACHINE:static does for a model on a fixed graph).
  for (TensorInfo& t : graph.tensors) t.known_at_compile_time = false;
  shape.host_input_bytes = layers::host_input_bytes(graph, fills);
  if (!with_values) return out;
  // Node features keyed by node, so a node has the same features in every batch (padding nodes: zeros).
  const streams::KeyedStream features(workload.seed, "x");
  for (layers::InputFill& fill : fills) {
    const TensorInfo& info = graph.tensor(fill.tensor);
    if (info.name != "x") continue;
    const std::int64_t width = info.shape.at(1);
    fill.kind = layers::InputFill::Kind::given_f32;
    fill.f32.assign(sz(info.elements()), 0.0f);
    for (std::size_t v = 0; v < keys.size(); ++v) features.standard_normal(keys[v], width, fill.f32.data() + v * sz(width));
  }
  layers::fill_inputs(out.instance.values, graph, fills, workload.seed);
  return out;
}

}  // namespace tilesim::workloads::loaders
