// PyG CGConv (cg_conv.py, PyG 2.0), without edge features (dim=0), aggr='add', batch_norm=False:
//   z = cat([x_i, x_j])                                     ([E, 2C])
//   out = x + aggr_{j -> i} sigmoid(lin_f(z)) * softplus(lin_s(z))     (lin_f, lin_s: Linear(2C, C))
// Deviation: each Linear on the concatenation is lowered as the sum of its two row blocks applied to the
// gathered rows, lin(z) = x_i W_i + x_j W_j + b (the op graph has no concatenation): the same values up
// to rounding and the same FLOPs, in two GEMMs and an add where PyTorch runs a cat and one GEMM.
// Weights drawn glorot and biases in the fan-in bound, as the other layers (torch.nn.Linear's default is
// kaiming_uniform).
#include "workloads/layers/init_bounds.hpp"
#include "workloads/layers/layers.hpp"

namespace tilesim::workloads::layers {

TensorId lower_cgconv(Lowering& l, const LayerSpec& spec, TensorId x) {
  OpGraph& g = l.graph();
  const EdgeTensors& e = l.raw();
  const std::int64_t n = l.num_nodes(), channels = g.tensor(x).shape.at(1);
  const std::string p = spec.name + ".";

  const TensorId x_i = l.op(gather(p + "gather_dst", g, x, e.dst));
  const TensorId x_j = l.op(gather(p + "gather_src", g, x, e.src));
  // One Linear(2C, C) on cat([x_i, x_j]): its rows for x_i (with the bias) and for x_j, summed.
  auto linear_on_concat = [&](const std::string& name) {
    const double bound = glorot_bound(2 * channels, channels);
    const TensorId w_i = l.input(p + name + ".weight_i", {channels, channels}, InputFill::Kind::uniform, bound);
    const TensorId w_j = l.input(p + name + ".weight_j", {channels, channels}, InputFill::Kind::uniform, bound);
    const TensorId b =
        spec.bias ? l.input(p + name + ".bias", {channels}, InputFill::Kind::uniform, bias_bound(2 * channels)) : TensorId{-1};
    const TensorId from_i = l.op(matmul(p + name + ".i", g, x_i, w_i, b));
    const TensorId from_j = l.op(matmul(p + name + ".j", g, x_j, w_j, -1));
    return l.op(binary(p + name, g, BinaryFn::add, from_i, from_j));
  };
  const TensorId gate = l.op(unary(p + "gate", g, UnaryFn::sigmoid, linear_on_concat("lin_f")));
  const TensorId core = l.op(unary(p + "core", g, UnaryFn::softplus, linear_on_concat("lin_s")));
  const TensorId message = l.op(binary(p + "message", g, BinaryFn::multiply, gate, core));
  const TensorId aggregated = l.op(scatter(p + "aggregate", g, aggregation_scatter_kind(message_aggregation(spec)), message, e.dst, n));
  return l.op(binary(p + "residual", g, BinaryFn::add, aggregated, x));
}

}  // namespace tilesim::workloads::layers
