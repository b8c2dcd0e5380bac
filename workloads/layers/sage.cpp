// PyG SAGEConv (sage_conv.py), aggr='mean', root_weight=True, project=False, normalize=False:
//   out = lin_l(mean_{j -> i} x_j) + lin_r(x_i)      (lin_l with bias, lin_r without)
#include "workloads/layers/init_bounds.hpp"
#include "workloads/layers/layers.hpp"

namespace tilesim::workloads::layers {

TensorId lower_sage(Lowering& l, const LayerSpec& spec, TensorId x) {
  OpGraph& g = l.graph();
  const EdgeTensors& e = l.raw();
  const std::int64_t n = l.num_nodes(), in = g.tensor(x).shape.at(1), out = spec.out_features;
  const std::string p = spec.name + ".";

  const TensorId x_j = l.op(gather(p + "gather_src", g, x, e.src));
  const TensorId mean = l.op(scatter(p + "aggregate", g, OpKind::scatter_mean, x_j, e.dst, n));
  // torch.nn.Linear-style layers, drawn glorot like the rest (PyG's Linear default is kaiming_uniform).
  const TensorId weight_l = l.input(p + "lin_l.weight", {in, out}, InputFill::Kind::uniform, glorot_bound(in, out));
  const TensorId bias_l =
      spec.bias ? l.input(p + "lin_l.bias", {out}, InputFill::Kind::uniform, bias_bound(in)) : TensorId{-1};
  const TensorId weight_r = l.input(p + "lin_r.weight", {in, out}, InputFill::Kind::uniform, glorot_bound(in, out));
  const TensorId left = l.op(matmul(p + "lin_l", g, mean, weight_l, bias_l));
  const TensorId right = l.op(matmul(p + "lin_r", g, x, weight_r, -1));
  return l.op(binary(p + "root", g, BinaryFn::add, left, right));
}

}  // namespace tilesim::workloads::layers
