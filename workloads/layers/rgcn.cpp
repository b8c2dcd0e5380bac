// PyG RGCNConv (rgcn_conv.py) on its segment_matmul path (no bases or blocks, aggr='mean'):
//   edges sorted by type (index_sort), ptr = index2ptr(edge_type)
//   message = segment_matmul(x[j], ptr, weight)       (weight [R, F_in, F_out], glorot)
//   out = scatter_mean(message, i) + x @ root + bias
// As in PyG's segment_matmul path, the mean runs over all of a node's incoming edges together, not per
// relation (PyG's own TODO; its per-relation loop path, and the RGCN paper, normalise per relation).
#include "workloads/layers/init_bounds.hpp"
#include "workloads/layers/layers.hpp"

namespace tilesim::workloads::layers {

TensorId lower_rgcn(Lowering& l, const LayerSpec& spec, TensorId x) {
  OpGraph& g = l.graph();
  const std::int32_t relations = spec.num_relations > 0 ? spec.num_relations : l.edges().num_relations;
  const EdgeTensors& e = l.by_relation(relations, (spec.json_path.empty() ? spec.name : spec.json_path) + ".num_relations");
  const std::int64_t n = l.num_nodes(), in = g.tensor(x).shape.at(1), out = spec.out_features;
  const std::string p = spec.name + ".";

  const TensorId weight = l.input(p + "weight", {relations, in, out}, InputFill::Kind::uniform, glorot_bound(in, out));
  const TensorId root = l.input(p + "root", {in, out}, InputFill::Kind::uniform, glorot_bound(in, out));
  const TensorId x_j = l.op(gather(p + "gather_src", g, x, e.src));
  const TensorId message = l.op(segment_matmul(p + "message", g, x_j, e.relation_offsets, weight));
  const TensorId mean = l.op(scatter(p + "aggregate", g, OpKind::scatter_mean, message, e.dst, n));
  const TensorId self = l.op(matmul(p + "root", g, x, root, -1));
  const TensorId result = l.op(binary(p + "root_add", g, BinaryFn::add, mean, self));
  return spec.bias ? add_bias(l, p, result, out, in) : result;
}

}  // namespace tilesim::workloads::layers
