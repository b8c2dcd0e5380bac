// PyG GINConv (gin_conv.py), eps fixed (train_eps=False):
//   out = nn(sum_{j -> i} x_j + (1 + eps) * x_i)
// with nn the MLP Linear -> ReLU -> Linear (GinNn::mlp, PyG's GIN model), or one Linear (GinNn::linear,
// GINConv(torch.nn.Linear(in, out)), as benchmarks of the bare conv build it). The MLP has no BatchNorm
// (PyG's GIN model adds one; in inference it is an affine map per feature).
#include "workloads/layers/init_bounds.hpp"
#include "workloads/layers/layers.hpp"

namespace tilesim::workloads::layers {

TensorId lower_gin(Lowering& l, const LayerSpec& spec, TensorId x) {
  OpGraph& g = l.graph();
  const EdgeTensors& e = l.raw();
  const std::int64_t n = l.num_nodes(), in = g.tensor(x).shape.at(1), out = spec.out_features;
  const std::int64_t hidden = spec.hidden_features > 0 ? spec.hidden_features : out;
  const std::string p = spec.name + ".";

  const TensorId x_j = l.op(gather(p + "gather_src", g, x, e.src));
  const TensorId sum = l.op(scatter(p + "aggregate", g, OpKind::scatter_add, x_j, e.dst, n));
  const TensorId root = l.op(unary(p + "root_scale", g, UnaryFn::scale, x, 1.0f + spec.eps));
  const TensorId z = l.op(binary(p + "combine", g, BinaryFn::add, sum, root));

  if (spec.gin_nn == GinNn::linear) {
    const TensorId w = l.input(p + "nn.weight", {in, out}, InputFill::Kind::uniform, glorot_bound(in, out));
    const TensorId b = spec.bias ? l.input(p + "nn.bias", {out}, InputFill::Kind::uniform, bias_bound(in)) : TensorId{-1};
    return l.op(matmul(p + "nn", g, z, w, b));
  }
  const TensorId w1 = l.input(p + "mlp0.weight", {in, hidden}, InputFill::Kind::uniform, glorot_bound(in, hidden));
  const TensorId b1 = spec.bias ? l.input(p + "mlp0.bias", {hidden}, InputFill::Kind::uniform, bias_bound(in)) : TensorId{-1};
  const TensorId w2 = l.input(p + "mlp2.weight", {hidden, out}, InputFill::Kind::uniform, glorot_bound(hidden, out));
  const TensorId b2 = spec.bias ? l.input(p + "mlp2.bias", {out}, InputFill::Kind::uniform, bias_bound(hidden)) : TensorId{-1};
  const TensorId h = l.op(matmul(p + "mlp0", g, z, w1, b1));
  const TensorId a = l.op(unary(p + "mlp1.relu", g, UnaryFn::relu, h));
  return l.op(matmul(p + "mlp2", g, a, w2, b2));
}

}  // namespace tilesim::workloads::layers
