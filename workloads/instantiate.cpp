// Turns a workload into an op graph and its input values. The generators (workloads/random_streams.hpp)
// are written out, not taken from <random>'s distributions, whose algorithms differ between standard
// libraries: the same seed must give the same values wherever tilesim is built. The scheme is
// documented in docs/workload-format.md ("Generated values").
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.hpp"
#include "common/host_info.hpp"
#include "common/integer_math.hpp"
#include "workloads/random_streams.hpp"
#include "workloads/workload.hpp"
#include "workloads/layers/model_spec.hpp"

namespace tilesim::workloads {

namespace {

using streams::mix64;

// One independent stream per (op position, purpose): values are stream 0, indices stream 1, so
// changing one op's index distribution leaves its values and every other op unchanged.
std::mt19937_64 engine_for(std::uint64_t seed, std::size_t position, std::uint64_t stream) {
  return std::mt19937_64(mix64(seed ^ mix64(2 * static_cast<std::uint64_t>(position) + stream)));
}

// host_input_memory_bytes, or no bound when the host does not say.
std::int64_t half_host_memory() {
  const std::int64_t bytes = host_input_memory_bytes();
  return bytes > 0 ? bytes : std::numeric_limits<std::int64_t>::max();
}

}  // namespace

Lowered lower(const Workload& workload, bool shapes_only) {
  Lowered out;
  for (std::size_t i = 0; i < workload.ops.size(); ++i) {
    const OpSpec& spec = workload.ops[i];
    // parse_workload guarantees this; a Workload built in code might not, and the generators need it.
    for (std::int64_t size : {spec.shape.num_inputs, spec.shape.num_features, spec.shape.num_outputs}) {
      if (size < 1 || size > std::numeric_limits<std::int32_t>::max()) {
        throw InputError(workload.source_file, "ops[" + std::to_string(i) + "]",
                         "sizes in [1, 2147483647]", std::to_string(size));
      }
    }
    const std::size_t first_op = out.graph.ops.size();
    if (spec.schnet_block) {
      layers::lower_schnet_block(out.graph, out.fills, spec.name, spec.shape.num_inputs, spec.shape.num_features,
                                 spec.shape.num_outputs, workload.seed, spec.dtype);
    } else {
      out.plain_ops.emplace_back(i, out.graph.ops.size());
      out.graph.add_gather_scatter(spec.name, spec.kind, spec.dtype, spec.shape);
    }
    // The op's own proportion applies to every op it lowers to (a schnet_block's twelve).
    if (spec.available_memory_proportion)
      for (std::size_t k = first_op; k < out.graph.ops.size(); ++k)
        out.graph.ops[k].available_memory_proportion = *spec.available_memory_proportion;
  }
  if (workload.model && workload.model->loader)
    throw InputError(workload.source_file, "loader",
                     "a workload without a \"loader\" here (`tilesim run` runs a loader's mini-batches, one step each)",
                     "a \"" + loaders::to_string(workload.model->loader->kind) + "\" loader");
  if (workload.model) {
    const graphs::EdgeList edges = graphs::build(workload.model->graph, workload.seed);
    // `node_features_only`: `bytes` counts the node features alone, a lower bound of the model's tensors.
    auto check_memory = [&](std::int64_t bytes, bool node_features_only) {
      if (shapes_only || bytes <= half_host_memory()) return;
      const std::string found = node_features_only ? "at least " + std::to_string(bytes >> 20) +
                                                         " MiB (the node features of the input and each layer's output)"
                                                   : std::to_string(bytes >> 20) + " MiB";
      throw InputError(workload.source_file, "model",
                       "a model whose tensors (inputs, weights and every intermediate) fit in half of this host's memory (" +
                           std::to_string(half_host_memory() >> 20) + " MiB)",
                       found + " on a graph of " + std::to_string(edges.num_nodes) + " nodes and " + std::to_string(edges.num_edges()) + " edges");
    };
    // Before lowering allocates anything per node or edge: the node features alone (the input and each
    // layer's output), a lower bound of the full check below, already over the budget are refused now,
    // so a small file declaring billions of nodes costs nothing.
    std::int64_t feature_bytes = 0, width = workload.model->num_features;
    const std::int64_t value_bytes = dtype_bytes(workload.model->dtype);
    auto add_rows = [&](std::int64_t w) {
      feature_bytes = saturating_add(feature_bytes, saturating_mul(saturating_mul(edges.num_nodes, w), value_bytes));
    };
    add_rows(width);
    for (const auto& layer : workload.model->layers) add_rows(width = layers::output_width(layer, width));
    check_memory(feature_bytes, true);

    layers::Lowering l(out.graph, out.fills, edges, workload.seed);
    l.source_file = workload.source_file;
    l.value_dtype = workload.model->dtype;
    if (workload.model->train)
      out.training = training::lower_training_step(l, out.fills, workload.model->layers, workload.model->num_features,
                                                   *workload.model->train, workload.seed, "train");
    else
      layers::lower_model(l, workload.model->layers, workload.model->num_features);
    std::int64_t bytes = 0;
    for (const auto& t : out.graph.tensors) bytes += t.bytes();
    check_memory(bytes, false);
  }
  // The run-wide proportion, for every op without its own.
  if (workload.available_memory_proportion)
    for (Op& op : out.graph.ops)
      if (op.available_memory_proportion == 0) op.available_memory_proportion = *workload.available_memory_proportion;
  return out;
}

std::vector<std::int32_t> generated_indices(std::uint64_t seed, std::size_t position, std::int64_t count, std::int64_t range) {
  auto engine = engine_for(seed, position, 1);
  return streams::uniform_indices(engine, count, range);
}

OpGraph build_graph(const Workload& workload) { return lower(workload).graph; }

Instance instantiate(const Workload& workload) { return instantiate(workload, lower(workload)); }

Instance instantiate(const Workload& workload, Lowered lowered, bool shapes_only) {
  Instance instance;
  if (shapes_only) {
    instance.graph = std::move(lowered.graph);
    instance.training = std::move(lowered.training);
    return instance;
  }
  for (const auto& [position, graph_op] : lowered.plain_ops) {
    const OpSpec& spec = workload.ops[position];
    const Op& op = lowered.graph.ops[graph_op];

    auto value_engine = engine_for(workload.seed, position, 0);
    instance.values.set_f32(op.input, streams::standard_normal(value_engine, spec.shape.num_inputs * spec.shape.num_features),
                            op.dtype);

    std::vector<std::int32_t> indices;
    if (spec.indices.distribution == IndexDistribution::file) {
      indices = read_index_file(spec.indices.file, op.num_indices(), op.index_range(), workload.source_file,
                                "ops[" + std::to_string(position) + "].indices.file");
    } else {
      indices = generated_indices(workload.seed, position, op.num_indices(), op.index_range());
      if (spec.indices.distribution == IndexDistribution::sorted) std::sort(indices.begin(), indices.end());
    }
    instance.values.set_i32(op.indices, std::move(indices));
  }
  layers::fill_inputs(instance.values, lowered.graph, lowered.fills, workload.seed);
  instance.graph = std::move(lowered.graph);
  instance.training = std::move(lowered.training);
  return instance;
}

}  // namespace tilesim::workloads
