// PyG GATConv (gat_conv.py), concat=True, add_self_loops=True, no edge features; `dropout` on the attention
// coefficients in training (attention_dropout):
//   h = lin(x).view(N, H, C)                                       (no bias, glorot)
//   a_src = (h * att_src).sum(-1), a_dst = (h * att_dst).sum(-1)   ([N, H])
//   edges: remove_self_loops, add_self_loops
//   e = leaky_relu(a_src[j] + a_dst[i], 0.2); alpha = dropout(softmax(e, index=i))
//   out = scatter_add(alpha[..., None] * h[j], i).view(N, H * C) + bias
// Deviations: (h * att).sum(-1) is lowered as a matmul with an [H*C, H] block-diagonal matrix holding
// att (the op graph has no per-group row reduction), so its FLOPs count 2*N*H*C*H rather than 2*N*H*C;
// the values are the same (the zeros add exactly). PyG's softmax adds 1e-16 to the sum, which leaves
// every float32 sum >= 1 (each node's maximum contributes exp(0)) unchanged, so it is left out.
#include "workloads/layers/init_bounds.hpp"
#include "workloads/layers/layers.hpp"

namespace tilesim::workloads::layers {

TensorId lower_gat(Lowering& l, const LayerSpec& spec, TensorId x) {
  OpGraph& g = l.graph();
  const EdgeTensors& e = l.self_loops();
  const std::int64_t n = l.num_nodes(), in = g.tensor(x).shape.at(1);
  const std::int64_t heads = spec.heads, channels = spec.out_features, width = heads * channels;
  const std::string p = spec.name + ".";

  const TensorId weight = l.input(p + "weight", {in, width}, InputFill::Kind::uniform, glorot_bound(in, width));
  // PyG's glorot on att [1, H, C] uses fan_in + fan_out = H + C.
  const double att_bound = glorot_bound(heads, channels);
  const TensorId att_src = l.input(p + "att_src", {width, heads}, InputFill::Kind::block_diagonal, att_bound, channels);
  const TensorId att_dst = l.input(p + "att_dst", {width, heads}, InputFill::Kind::block_diagonal, att_bound, channels);
  const TensorId h = l.op(matmul(p + "lin", g, x, weight, -1));
  const TensorId alpha_src = l.op(matmul(p + "alpha_src", g, h, att_src, -1));
  const TensorId alpha_dst = l.op(matmul(p + "alpha_dst", g, h, att_dst, -1));

  const TensorId a_j = l.op(gather(p + "alpha_j", g, alpha_src, e.src));
  const TensorId a_i = l.op(gather(p + "alpha_i", g, alpha_dst, e.dst));
  const TensorId logits = l.op(binary(p + "alpha_sum", g, BinaryFn::add, a_j, a_i));
  const TensorId scores = l.op(unary(p + "leaky_relu", g, UnaryFn::leaky_relu, logits, spec.negative_slope));

  // torch_geometric.utils.softmax by destination.
  Op max_op = scatter(p + "softmax.max", g, OpKind::scatter_max, scores, e.dst, n);
  max_op.detach = true;  // PyG's softmax takes the max of src.detach(): no gradient through the shift
  const TensorId max = l.op(max_op);
  const TensorId max_e = l.op(gather(p + "softmax.max_gather", g, max, e.dst));
  const TensorId shifted = l.op(binary(p + "softmax.subtract", g, BinaryFn::subtract, scores, max_e));
  const TensorId exps = l.op(unary(p + "softmax.exp", g, UnaryFn::exp, shifted));
  const TensorId sum = l.op(scatter(p + "softmax.sum", g, OpKind::scatter_add, exps, e.dst, n));
  const TensorId sum_e = l.op(gather(p + "softmax.sum_gather", g, sum, e.dst));
  const TensorId alpha = dropout(l, p + "attention_dropout", l.op(binary(p + "softmax.divide", g, BinaryFn::divide, exps, sum_e)),
                                 spec.attention_dropout);

  const TensorId result = weighted_aggregate(l, p, h, e, alpha);
  return spec.bias ? add_bias(l, p, result, width, in) : result;
}

}  // namespace tilesim::workloads::layers
