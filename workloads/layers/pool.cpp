// A readout inside the model: each graph's node rows reduced to one row by the batch vector, as PyG's
// global_add_pool / global_mean_pool (torch_scatter's scatter by `batch`) do in a graph classifier's
// forward before its MLP. The rows after it are graphs, so only linear layers follow (parse_model).
#include "common/error.hpp"
#include "workloads/layers/layers.hpp"

namespace tilesim::workloads::layers {

TensorId lower_pool(Lowering& l, const LayerSpec& spec, TensorId x) {
  OpGraph& g = l.graph();
  const graphs::EdgeList& edges = l.edges();
  const std::int64_t rows = g.tensor(x).shape.at(0);
  if (edges.num_graphs <= 0 || static_cast<std::int64_t>(edges.graph_of_node.size()) != rows)
    throw InputError(l.source_file, spec.json_path + ".layer",
                     "a graph source that batches several graphs (\"molecules\", a \"graphs\" loader) for a \"pool\" layer",
                     "\"pool\" on a single graph");
  const TensorId batch = l.given_i32(spec.name + ".batch", edges.graph_of_node);
  const OpKind kind = spec.pool_reduce == PoolReduce::mean ? OpKind::scatter_mean : OpKind::scatter_add;
  return l.op(scatter(spec.name + ".pool", g, kind, x, batch, edges.num_graphs));
}

}  // namespace tilesim::workloads::layers
