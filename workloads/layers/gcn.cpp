// PyG GCNConv (gcn_conv.py), normalize=True, add_self_loops=True, improved=False, cached=False:
//   edge_index = add_remaining_self_loops(edge_index)          (one loop per node, weight 1)
//   deg = scatter(ones, col, reduce='sum'); dinv = deg^-1/2 with inf -> 0
//   w = dinv[row] * 1 * dinv[col]
//   h = lin(x)                                                 (no bias, glorot)
//   out = scatter_add(w * h[row], col) + bias
#include "workloads/layers/init_bounds.hpp"
#include "workloads/layers/layers.hpp"

namespace tilesim::workloads::layers {

TensorId lower_gcn(Lowering& l, const LayerSpec& spec, TensorId x) {
  OpGraph& g = l.graph();
  const EdgeTensors& e = l.self_loops();
  const std::int64_t n = l.num_nodes(), in = g.tensor(x).shape.at(1), out = spec.out_features;
  const std::string p = spec.name + ".";

  const TensorId degree = l.op(degree_count(p + "degree", g, e.dst, n));
  const TensorId dinv = l.op(unary(p + "deg_inv_sqrt", g, UnaryFn::rsqrt_or_zero, degree));
  const TensorId dinv_src = l.op(gather(p + "norm_src", g, dinv, e.src));
  const TensorId dinv_dst = l.op(gather(p + "norm_dst", g, dinv, e.dst));
  const TensorId norm = l.op(binary(p + "norm", g, BinaryFn::multiply, dinv_src, dinv_dst));

  const TensorId weight = l.input(p + "weight", {in, out}, InputFill::Kind::uniform, glorot_bound(in, out));
  const TensorId h = l.op(matmul(p + "lin", g, x, weight, -1));
  const TensorId result = weighted_aggregate(l, p, h, e, norm);
  return spec.bias ? add_bias(l, p, result, out, in) : result;
}

}  // namespace tilesim::workloads::layers
