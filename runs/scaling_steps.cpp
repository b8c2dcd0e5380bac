#include "runs/scaling_steps.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "workloads/graphs/algorithms.hpp"
#include "workloads/loaders/batch_lowering.hpp"
#include "workloads/loaders/batch_source.hpp"
#include "workloads/loaders/epoch_work.hpp"

namespace tilesim::runs {

namespace {

namespace loaders = workloads::loaders;

bool all_verified(const BackendResult& r) {
  for (const OpResult& row : r.ops)
    if (!row.verified.value_or(true)) return false;
  return true;
}

DeviceStep run_instance(const workloads::Instance& instance, Backend& device, const DeviceOptions& options) {
  device.prepare(instance.graph);
  DeviceStep step;
  step.result = device.run(instance.graph, instance.values, options.run);
  step.graph = instance.graph;
  step.training = instance.training;
  step.verified = all_verified(step.result);
  return step;
}

// Batches 0 .. count-1 of `source` as steps: every one on an exact-shape backend; on a fixed-shape one the
// first, padded to the largest, standing for all (its items the mean batch's).
DeviceRuns run_batches_of(const workloads::Workload& workload, const loaders::BatchSource& source, std::int64_t count, Backend& device,
                          const DeviceOptions& options, const std::string& what) {
  std::vector<loaders::Batch> batches;
  for (std::int64_t k = 0; k < count; ++k) batches.push_back(source.make(k));
  DeviceRuns runs;
  const auto kind = source.spec().kind;
  runs.unit = loaders::throughput_unit(kind);
  std::optional<loaders::PaddedShape> padded;
  if (options.fixed_shapes) padded = loaders::padded_shape(source, batches);
  double items = 0;
  std::int64_t nodes = 0, edges = 0;
  for (std::int64_t k = 0; k < count; ++k) {
    const bool run = !options.fixed_shapes || k == 0;
    loaders::LoweredBatch lowered =
        loaders::lower_batch(workload, source, k, batches[static_cast<std::size_t>(k)], padded, run && !options.shapes_only);
    items += loaders::batch_items(lowered.shape, kind);
    nodes += lowered.shape.nodes;
    edges += lowered.shape.edges;
    if (!run) continue;
    DeviceStep step = run_instance(lowered.instance, device, options);
    step.items = loaders::batch_items(lowered.shape, kind);
    step.nodes = lowered.shape.nodes;
    step.edges = lowered.shape.edges;
    step.host_input_bytes = lowered.shape.host_input_bytes;
    runs.steps.push_back(std::move(step));
  }
  if (options.fixed_shapes) {
    // The one padded step stands for every batch: its real work is the batches' mean.
    DeviceStep only = runs.steps.front();
    only.items = items / static_cast<double>(count);
    only.nodes = nodes / count;
    only.edges = edges / count;
    runs.steps.assign(static_cast<std::size_t>(count), only);
    runs.how = what + ", each padded to the largest (" + std::to_string(padded->size.num_nodes) + " nodes, " +
               std::to_string(padded->size.num_edges) + " edges): one compiled program, whose simulated time depends on "
               "shapes alone, so one simulated step stands for each";
  } else {
    runs.how = what + ", each run in its own shape";
  }
  return runs;
}

workloads::Workload without_parallel(const workloads::Workload& workload) {
  workloads::Workload w = workload;
  w.parallel.reset();
  return w;
}

}  // namespace

DeviceStep run_whole_step(const workloads::Workload& workload, Backend& device, const DeviceOptions& options) {
  const workloads::Workload w = without_parallel(workload);
  if (w.model && w.model->loader) {
    const loaders::BatchSource source(w);
    DeviceRuns one = run_batches_of(w, source, 1, device, options, "the loader's first batch");
    return one.steps.front();
  }
  workloads::Lowered lowered = workloads::lower(w, options.shapes_only);
  // Items: the graph's nodes, or for a graph task its graphs (the loss's rows).
  std::int64_t nodes = 0, graphs = 0;
  for (const TensorInfo& t : lowered.graph.tensors)
    if (t.name == "x" && !t.shape.empty()) nodes = t.shape[0];
  for (const Op& op : lowered.graph.ops)
    if (op.kind == OpKind::loss) graphs = op.shape.num_inputs;
  const bool graph_task = w.model && w.model->train && w.model->train->task == workloads::training::TrainSpec::Task::graph;
  const std::int64_t host_input_bytes = workloads::layers::host_input_bytes(lowered.graph, lowered.fills);
  workloads::Instance instance = workloads::instantiate(w, std::move(lowered), options.shapes_only);
  DeviceStep step = run_instance(instance, device, options);
  step.items = static_cast<double>(graph_task ? graphs : nodes);
  step.nodes = nodes;
  step.host_input_bytes = host_input_bytes;
  return step;
}

DeviceRuns run_loader_batches(const workloads::Workload& workload, Backend& device, std::int64_t count, const DeviceOptions& options) {
  const workloads::Workload w = without_parallel(workload);
  const loaders::BatchSource source(w);
  DeviceRuns runs = run_batches_of(w, source, count, device, options, "the loader's first " + std::to_string(count) + " batches (" + source.describe() + ")");
  runs.epoch = loaders::epoch_work(source);
  return runs;
}

DeviceRuns run_micro_batches(const workloads::Workload& workload, Backend& device, std::int64_t micro_batches, const DeviceOptions& options) {
  workloads::Workload w = without_parallel(workload);
  if (micro_batches == 1) {
    DeviceRuns runs;
    runs.steps.push_back(run_whole_step(w, device, options));
    const bool graph_task = w.model->train && w.model->train->task == workloads::training::TrainSpec::Task::graph;
    runs.unit = graph_task ? "graphs" : "nodes";
    runs.how = "one micro-batch: the whole graph";
    return runs;
  }
  // METIS clusters of the graph, one per micro-batch, in order (Cluster-GCN's cut, without its shuffle).
  loaders::LoaderSpec clusters;
  clusters.kind = loaders::LoaderSpec::Kind::cluster;
  clusters.num_parts = static_cast<std::int32_t>(micro_batches);
  clusters.clusters_per_batch = 1;
  clusters.shuffle = false;
  clusters.batches = micro_batches;
  w.model->loader = clusters;
  const loaders::BatchSource source(w);
  DeviceRuns runs = run_batches_of(w, source, micro_batches, device, options,
                                   std::to_string(micro_batches) + " micro-batches, each the subgraph one METIS cluster's nodes induce");
  runs.unit = "nodes";
  return runs;
}

PartitionRuns run_largest_partition(const workloads::Workload& workload, Backend& device, std::int64_t partitions,
                                    const DeviceOptions& options) {
  const workloads::Workload plain = without_parallel(workload);
  const workloads::graphs::EdgeList graph = workloads::graphs::build(plain.model->graph, plain.seed);
  if (partitions > graph.num_nodes)
    throw InputError(plain.source_file, "parallel.partitions", "at most the graph's " + std::to_string(graph.num_nodes) + " nodes",
                     std::to_string(partitions));
  const auto P = static_cast<std::int32_t>(partitions);
  const std::vector<std::int32_t> part_of = workloads::graphs::metis_partition(graph, P, plain.seed);
  PartitionRuns out;
  out.parts = workloads::graphs::halo_statistics(graph, part_of, P);
  out.graph_nodes = graph.num_nodes;
  out.graph_edges = graph.num_edges();
  for (std::size_t p = 1; p < out.parts.size(); ++p) {
    const auto& a = out.parts[p];
    const auto& b = out.parts[out.largest];
    if (a.local_edges + a.cut_edges > b.local_edges + b.cut_edges) out.largest = p;
  }

  // The largest partition's subgraph: owned nodes first, then its halo, with every in-edge of an owned node.
  const auto largest = static_cast<std::int32_t>(out.largest);
  std::vector<std::int32_t> local(static_cast<std::size_t>(graph.num_nodes), -1);
  loaders::Batch batch;
  for (std::int32_t v = 0; v < graph.num_nodes; ++v)
    if (part_of[static_cast<std::size_t>(v)] == largest) {
      local[static_cast<std::size_t>(v)] = static_cast<std::int32_t>(batch.global_nodes.size());
      batch.global_nodes.push_back(v);
    }
  for (std::int64_t e = 0; e < graph.num_edges(); ++e) {
    const auto s = static_cast<std::size_t>(graph.src[static_cast<std::size_t>(e)]);
    const auto d = static_cast<std::size_t>(graph.dst[static_cast<std::size_t>(e)]);
    if (part_of[d] != largest) continue;
    if (local[s] < 0) {
      local[s] = static_cast<std::int32_t>(batch.global_nodes.size());
      batch.global_nodes.push_back(static_cast<std::int32_t>(s));
    }
    batch.graph.src.push_back(local[s]);
    batch.graph.dst.push_back(local[d]);
    if (!graph.edge_type.empty()) batch.graph.edge_type.push_back(graph.edge_type[static_cast<std::size_t>(e)]);
  }
  batch.graph.num_nodes = static_cast<std::int64_t>(batch.global_nodes.size());
  batch.graph.num_relations = graph.num_relations;

  // The training mask and node keys of the whole graph, through a cluster loader over it.
  workloads::Workload w = plain;
  loaders::LoaderSpec spec;
  spec.kind = loaders::LoaderSpec::Kind::cluster;
  spec.num_parts = P;
  spec.shuffle = false;
  w.model->loader = spec;
  const loaders::BatchSource source(w);
  std::optional<loaders::PaddedShape> padded;
  if (options.fixed_shapes) padded = loaders::padded_shape(source, {batch});
  const std::int64_t owned = out.parts[out.largest].owned_nodes;
  loaders::LoweredBatch lowered = loaders::lower_batch(w, source, 0, batch, padded, !options.shapes_only);
  DeviceStep step = run_instance(lowered.instance, device, options);
  step.items = static_cast<double>(owned);
  step.nodes = lowered.shape.nodes;
  step.edges = lowered.shape.edges;
  step.host_input_bytes = lowered.shape.host_input_bytes;
  out.runs.steps.push_back(std::move(step));
  out.runs.unit = "nodes";
  out.runs.how = "partition " + std::to_string(out.largest) + " of " + std::to_string(P) + " (the most edges): its " + std::to_string(owned) +
                 " owned nodes, " + std::to_string(out.parts[out.largest].halo_nodes) + " halo nodes and the " +
                 std::to_string(lowered.shape.edges) + " in-edges of its owned nodes, standing for the slowest node";
  return out;
}

}  // namespace tilesim::runs
