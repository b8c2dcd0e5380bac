// torch.nn.Linear applied to every node row, with no message passing: out = x W + b. PyG models put
// such layers before and after their convolutions (SchNet's readout lin1 -> shifted softplus -> lin2,
// Cluster-GCN's input Dense, a GIN whose nn is one Linear); the layer's activation follows it.
#include "workloads/layers/init_bounds.hpp"
#include "workloads/layers/layers.hpp"

namespace tilesim::workloads::layers {

TensorId lower_linear(Lowering& l, const LayerSpec& spec, TensorId x) {
  OpGraph& g = l.graph();
  const std::int64_t in = g.tensor(x).shape.at(1), out = spec.out_features;
  const std::string p = spec.name + ".";
  // Drawn glorot like the other layers' weights (torch's own default is kaiming_uniform): values, not times.
  const TensorId weight = l.input(p + "weight", {in, out}, InputFill::Kind::uniform, glorot_bound(in, out));
  const TensorId bias = spec.bias ? l.input(p + "bias", {out}, InputFill::Kind::uniform, bias_bound(in)) : TensorId{-1};
  return l.op(matmul(p + "lin", g, x, weight, bias));
}

}  // namespace tilesim::workloads::layers
