// PyG FiLMConv (film_conv.py, PyG 2.0), one relation (num_relations=1), nn=None (each FiLM generator a
// single Linear), act=ReLU():
//   beta_s, gamma_s = film_skip(x).split(out)            (Linear(in, 2 out, bias=False))
//   out = relu(gamma_s * lin_skip(x) + beta_s)            (lin_skip: Linear(in, out, bias=False))
//   beta, gamma = films[0](x).split(out)                  (Linear(in, 2 out), with bias)
//   out += aggr_{j -> i} relu(gamma_i * lins[0](x)_j + beta_i)   (lins[0]: Linear(in, out, bias=False))
// with aggr 'mean' by default ('add' and 'max' as PyG allows). No self-loops are added: the skip term is
// the node's own contribution.
// Deviation: each FiLM generator's [in, 2 out] weight is lowered as its two halves, beta's and gamma's,
// each a matmul of [in, out] (the op graph has no split): the values of split() exactly, the same FLOPs,
// two GEMMs where PyG launches one and takes two views of it. Weights drawn glorot and biases in the
// fan-in bound, as the other layers (torch.nn.Linear's default is kaiming_uniform).
#include "workloads/layers/init_bounds.hpp"
#include "workloads/layers/layers.hpp"

namespace tilesim::workloads::layers {

TensorId lower_film(Lowering& l, const LayerSpec& spec, TensorId x) {
  OpGraph& g = l.graph();
  const EdgeTensors& e = l.raw();
  const std::int64_t n = l.num_nodes(), in = g.tensor(x).shape.at(1), out = spec.out_features;
  const std::string p = spec.name + ".";
  // A Linear(in, out) weight or bias of the layer, drawn as the other layers draw theirs.
  // A FiLM generator's halves share the bound of its whole [in, 2 out] weight.
  auto weight = [&](const std::string& name, std::int64_t fan_out) {
    return l.input(p + name + ".weight", {in, out}, InputFill::Kind::uniform, glorot_bound(in, fan_out));
  };
  auto bias = [&](const std::string& name) { return l.input(p + name + ".bias", {out}, InputFill::Kind::uniform, bias_bound(in)); };

  // The skip term: the node's own features through lin_skip, modulated by film_skip.
  const TensorId beta_skip = l.op(matmul(p + "film_skip.beta", g, x, weight("film_skip.beta", 2 * out), -1));
  const TensorId gamma_skip = l.op(matmul(p + "film_skip.gamma", g, x, weight("film_skip.gamma", 2 * out), -1));
  const TensorId h_skip = l.op(matmul(p + "lin_skip", g, x, weight("lin_skip", out), -1));
  const TensorId skip_scaled = l.op(binary(p + "skip.gamma", g, BinaryFn::multiply, gamma_skip, h_skip));
  const TensorId skip = l.op(unary(p + "skip.act", g, UnaryFn::relu,
                                   l.op(binary(p + "skip.beta", g, BinaryFn::add, skip_scaled, beta_skip))));

  // The messages: the sources' lins[0] rows modulated by the destination's films[0] output.
  const bool with_bias = spec.bias;
  const TensorId beta = l.op(matmul(p + "film.beta", g, x, weight("film.beta", 2 * out), with_bias ? bias("film.beta") : TensorId{-1}));
  const TensorId gamma = l.op(matmul(p + "film.gamma", g, x, weight("film.gamma", 2 * out), with_bias ? bias("film.gamma") : TensorId{-1}));
  const TensorId h = l.op(matmul(p + "lin", g, x, weight("lin", out), -1));
  const TensorId x_j = l.op(gather(p + "gather_src", g, h, e.src));
  const TensorId beta_i = l.op(gather(p + "gather_beta", g, beta, e.dst));
  const TensorId gamma_i = l.op(gather(p + "gather_gamma", g, gamma, e.dst));
  const TensorId scaled = l.op(binary(p + "message.gamma", g, BinaryFn::multiply, gamma_i, x_j));
  const TensorId message = l.op(unary(p + "message.act", g, UnaryFn::relu,
                                      l.op(binary(p + "message.beta", g, BinaryFn::add, scaled, beta_i))));
  const TensorId aggregated = l.op(scatter(p + "aggregate", g, aggregation_scatter_kind(message_aggregation(spec)), message, e.dst, n));
  return l.op(binary(p + "combine", g, BinaryFn::add, skip, aggregated));
}

}  // namespace tilesim::workloads::layers
