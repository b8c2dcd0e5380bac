// PyG GATConv (gat_conv.py), concat=True (or False: the heads averaged), add_self_loops=True, no edge features; `dropout` on the attention
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
// "attention": "per_edge" computes the logits in the message from the gathered rows instead, as the DGL
// team's benchmark GATConv for ogbn-arxiv does (dgl-0.5-benchmark, end_to_end/full_graph/
// node_classification/main_pyg_arxiv_gat.py: message(x_i, x_j) takes (x_i * att_i).sum(-1) +
// (x_j * att_j).sum(-1), and x_j * alpha is the message): h gathered by destination and by source, each
// times its block-diagonal att (E rows where PyG's GATConv has N), the same values.
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
  const bool per_edge = spec.gat_attention == GatAttention::per_edge;
  TensorId a_j = -1, a_i = -1, h_j = -1;
  if (per_edge) {
    h_j = l.op(gather(p + "gather_src", g, h, e.src));
    const TensorId h_i = l.op(gather(p + "gather_dst", g, h, e.dst));
    a_j = l.op(matmul(p + "alpha_j", g, h_j, att_src, -1));
    a_i = l.op(matmul(p + "alpha_i", g, h_i, att_dst, -1));
  } else {
    const TensorId alpha_src = l.op(matmul(p + "alpha_src", g, h, att_src, -1));
    const TensorId alpha_dst = l.op(matmul(p + "alpha_dst", g, h, att_dst, -1));
    a_j = l.op(gather(p + "alpha_j", g, alpha_src, e.src));
    a_i = l.op(gather(p + "alpha_i", g, alpha_dst, e.dst));
  }
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

  // Per edge, the message reuses the gathered source rows.
  TensorId result = per_edge ? aggregate_messages(l, p, h_j, e, alpha) : weighted_aggregate(l, p, h, e, alpha);
  if (!spec.concat && heads > 1) {
    // PyG's concat=False: out.mean(dim=1) over the heads, lowered as a matmul with a constant [H*C, C]
    // matrix holding 1/H at (h*C + c, c) (the op graph has no reduction over column groups): the same
    // values up to rounding, made on the device and never trained.
    std::vector<float> mean(static_cast<std::size_t>(width * channels), 0.0f);
    for (std::int64_t h = 0; h < heads; ++h)
      for (std::int64_t c = 0; c < channels; ++c) mean[static_cast<std::size_t>((h * channels + c) * channels + c)] = 1.0f / static_cast<float>(heads);
    const TensorId head_mean = l.given_f32(p + "head_mean", {width, channels}, std::move(mean));
    l.keep_on_device(head_mean);
    result = l.op(matmul(p + "head_mean", g, result, head_mean, -1));
  }
  const std::int64_t out_width = spec.concat ? width : channels;
  return spec.bias ? add_bias(l, p, result, out_width, in) : result;
}

}  // namespace tilesim::workloads::layers
