// A readout inside the model: each graph's node rows reduced to one row by the batch vector, as PyG's
// global_add_pool / global_mean_pool (torch_scatter's scatter by `batch`) do in a graph classifier's
// forward before its MLP. The rows after it are graphs, so only linear layers follow (parse_model).
#include "common/error.hpp"
#include "workloads/layers/layers.hpp"

namespace tilesim::workloads::layers {

bool batches_graphs(const Lowering& l, std::int64_t rows) {
  const graphs::EdgeList& edges = l.edges();
  return edges.num_graphs > 0 && static_cast<std::int64_t>(edges.graph_of_node.size()) == rows;
}

TensorId pool_by_graph(Lowering& l, TensorId x, PoolReduce reduce, const std::string& op_name, const std::string& batch_name) {
  OpGraph& g = l.graph();
  const graphs::EdgeList& edges = l.edges();
  const TensorId batch = l.given_i32(batch_name, edges.graph_of_node);
  const OpKind kind = reduce == PoolReduce::mean ? OpKind::scatter_mean : OpKind::scatter_add;
  return l.op(scatter(op_name, g, kind, x, batch, edges.num_graphs));
}

TensorId lower_pool(Lowering& l, const LayerSpec& spec, TensorId x) {
  if (!batches_graphs(l, l.graph().tensor(x).shape.at(0)))
    throw InputError(l.source_file, spec.json_path + ".layer",
                     "a graph source that batches several graphs (\"molecules\", a \"graphs\" loader) for a \"pool\" layer",
                     "\"pool\" on a single graph");
  return pool_by_graph(l, x, spec.pool_reduce, spec.name + ".pool", spec.name + ".batch");
}

}  // namespace tilesim::workloads::layers
