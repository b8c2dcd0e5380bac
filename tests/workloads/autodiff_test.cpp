// The backward pass lowered into ops (workloads/training/autodiff): for each layer kind, a small model
// with a loss head is differentiated, the whole graph is evaluated op by op with the reference, and
// every parameter's largest gradients equal central finite differences of the loss.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "ir/reference/reference.hpp"
#include "workloads/layers/layers.hpp"
#include "workloads/training/autodiff.hpp"

using namespace tilesim;
using namespace tilesim::workloads;
using namespace tilesim::workloads::layers;

namespace {

// 10 nodes in two "molecules" (0-4 and 5-9), each a ring both ways plus a chord; node 9 receives nothing
// but its ring edges.
graphs::EdgeList two_molecules() {
  graphs::EdgeList g;
  g.num_nodes = 10;
  for (int m = 0; m < 2; ++m)
    for (int i = 0; i < 5; ++i) {
      const int a = 5 * m + i, b = 5 * m + (i + 1) % 5;
      g.src.insert(g.src.end(), {a, b});
      g.dst.insert(g.dst.end(), {b, a});
    }
  g.src.insert(g.src.end(), {0, 6});
  g.dst.insert(g.dst.end(), {2, 8});
  g.graph_of_node = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
  g.num_graphs = 2;
  return g;
}

struct Model {
  OpGraph graph;
  TensorValues values;
  TensorId loss = -1;
  std::size_t forward_end = 0;  // ops [0, forward_end) are the forward pass and the loss
  std::map<TensorId, TensorId> grads;
};

Op loss_op(LossFn fn, const OpGraph& g, TensorId x, TensorId labels_or_targets, OpKind kind) {
  Op op;
  op.name = kind == OpKind::loss ? "loss" : "loss.grad";
  op.kind = kind;
  op.loss = fn;
  op.input = x;
  op.shape.num_inputs = g.tensor(x).shape.at(0);
  op.shape.num_features = g.tensor(x).shape.at(1);
  if (fn == LossFn::cross_entropy) op.indices = labels_or_targets;
  else op.weight = labels_or_targets;
  op.phase = kind == OpKind::loss ? OpPhase::loss : OpPhase::backward;
  return op;
}

// A model of `layers` over 4 input features; node task (cross entropy over every node) or graph task
// (add-pool by molecule, then mse), differentiated with respect to every weight and bias.
Model build(const std::vector<LayerSpec>& layers, bool graph_task, const graphs::EdgeList& edges = two_molecules()) {
  Model m;
  std::vector<InputFill> fills;
  Lowering l(m.graph, fills, edges, 3);
  TensorId y = lower_model(l, layers, 4);
  const std::int64_t width = m.graph.tensor(y).shape.at(1);
  TensorId target = -1;
  LossFn fn = LossFn::cross_entropy;
  if (graph_task) {
    const TensorId batch = l.given_i32("batch", edges.graph_of_node);
    y = l.op(scatter("pool", m.graph, OpKind::scatter_add, y, batch, edges.num_graphs));
    target = l.given_f32("targets", {edges.num_graphs, width}, std::vector<float>(static_cast<std::size_t>(2 * width), 0.5f));
    fn = LossFn::mse;
  } else {
    std::vector<std::int32_t> labels(static_cast<std::size_t>(edges.num_nodes));
    for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::int32_t>((i * 7) % static_cast<std::size_t>(width));
    target = l.given_i32("labels", labels);
  }
  m.loss = m.graph.add_op(loss_op(fn, m.graph, y, target, OpKind::loss));
  m.forward_end = m.graph.ops.size();
  const TensorId seed = m.graph.add_op(loss_op(fn, m.graph, y, target, OpKind::loss_grad));
  std::set<TensorId> params;
  for (const InputFill& f : fills)
    if (f.kind == InputFill::Kind::uniform || f.kind == InputFill::Kind::block_diagonal) params.insert(f.tensor);
  fill_inputs(m.values, m.graph, fills, 3);
  m.grads = training::append_backward(m.graph, m.forward_end - 1, y, seed, params);
  REQUIRE(m.grads.size() == params.size());
  return m;
}

// Every op of ops [0, end) by the reference, outputs into `values`; returns the loss in double.
double evaluate(const Model& m, TensorValues& values, std::size_t end) {
  double loss = 0;
  for (std::size_t k = 0; k < end; ++k) {
    const Op& op = m.graph.ops[k];
    if (op.output == m.loss) loss = reference::expect(op, resolve_operands(op, values)).value.at(0);
    values.set_f32(op.output, reference::compute(op, values));
  }
  return loss;
}

Model check_gradients(const std::vector<LayerSpec>& layers, bool graph_task, const graphs::EdgeList& edges = two_molecules()) {
  Model m = build(layers, graph_task, edges);
  TensorValues values = m.values;
  evaluate(m, values, m.graph.ops.size());
  for (const Op& op : m.graph.ops) {
    INFO(op.name);
    CHECK(reference::verify(op, values, values.f32(op.output)).ok);
  }
  std::size_t checked = 0;
  for (const auto& [param, grad_tensor] : m.grads) {
    const std::vector<float> grad = values.f32(grad_tensor);
    std::vector<std::size_t> order(grad.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return std::fabs(grad[a]) > std::fabs(grad[b]); });
    for (std::size_t r = 0; r < std::min<std::size_t>(3, order.size()); ++r) {
      const std::size_t i = order[r];
      const float p0 = m.values.f32(param)[i];
      const float h = 1.0f / 256;
      TensorValues up = m.values, down = m.values;
      up.mutable_f32(param)[i] = p0 + h;
      down.mutable_f32(param)[i] = p0 - h;
      const double fd = (evaluate(m, up, m.forward_end) - evaluate(m, down, m.forward_end)) / (static_cast<double>(p0 + h) - (p0 - h));
      INFO(m.graph.tensor(param).name << "[" << i << "]: backward " << grad[i] << ", finite difference " << fd);
      CHECK(std::fabs(fd - grad[i]) <= 2e-3 + 0.03 * std::fabs(fd));
      ++checked;
    }
  }
  CHECK(checked >= 3);
  return m;
}

LayerSpec layer(LayerKind kind, const std::string& name, std::int64_t out) {
  LayerSpec s;
  s.kind = kind;
  s.name = name;
  s.out_features = out;
  return s;
}

}  // namespace

TEST_CASE("backward ops of GCN equal finite differences of the loss", "[training][autodiff][unit]") {
  LayerSpec a = layer(LayerKind::gcn, "conv1", 6);
  a.activation = UnaryFn::relu;
  check_gradients({a, layer(LayerKind::gcn, "conv2", 3)}, false);
}

TEST_CASE("backward ops of GraphSAGE (scatter mean) and GIN equal finite differences", "[training][autodiff][unit]") {
  LayerSpec a = layer(LayerKind::sage, "sage1", 5);
  a.activation = UnaryFn::leaky_relu;
  a.activation_scalar = 0.1f;
  check_gradients({a, layer(LayerKind::gin, "gin2", 3)}, false);
}

TEST_CASE("backward ops of GIN with one Linear and of a Linear readout equal finite differences", "[training][autodiff][unit]") {
  LayerSpec a = layer(LayerKind::gin, "gin1", 4);
  a.gin_nn = GinNn::linear;
  a.activation = UnaryFn::shifted_softplus;
  check_gradients({a, layer(LayerKind::linear, "readout", 3)}, false);
}

TEST_CASE("backward ops of GAT (softmax with a detached max) equal finite differences", "[training][autodiff][unit]") {
  LayerSpec a = layer(LayerKind::gat, "gat1", 3);
  a.heads = 2;
  a.activation = UnaryFn::exp;
  check_gradients({a, layer(LayerKind::gat, "gat2", 3)}, false);
}

TEST_CASE("backward ops of SchNet with add-pool and mse equal finite differences", "[training][autodiff][unit]") {
  LayerSpec s = layer(LayerKind::schnet, "interaction1", 4);
  s.filters = 4;
  s.num_gaussians = 5;
  s.cutoff = 4.0f;
  check_gradients({s}, true);
}

TEST_CASE("backward ops of FiLM (mean and max aggregation) equal finite differences", "[training][autodiff][unit]") {
  LayerSpec a = layer(LayerKind::film, "film1", 4);
  LayerSpec b = layer(LayerKind::film, "film2", 3);
  b.aggregation = MessageAggregation::max;
  check_gradients({a, b}, false);
}

TEST_CASE("backward ops of CGConv (sigmoid gate times softplus, residual) equal finite differences", "[training][autodiff][unit]") {
  LayerSpec a = layer(LayerKind::cgconv, "cg1", 6);
  LayerSpec b = layer(LayerKind::cgconv, "cg2", 6);
  b.aggregation = MessageAggregation::mean;
  check_gradients({a, b, layer(LayerKind::linear, "readout", 3)}, false);
}

TEST_CASE("backward groups are named after their layers", "[training][autodiff][unit]") {
  LayerSpec a = layer(LayerKind::gcn, "conv1", 6);
  Model m = build({a, layer(LayerKind::gcn, "conv2", 3)}, false);
  std::vector<std::string> backward_groups;
  for (const OpGroup& g : m.graph.groups)
    if (g.phase == OpPhase::backward) backward_groups.push_back(g.name);
  CHECK(backward_groups == std::vector<std::string>{"conv2.grad", "conv1.grad"});
  for (std::size_t k = m.forward_end; k < m.graph.ops.size(); ++k) CHECK(m.graph.ops[k].phase == OpPhase::backward);
  CHECK(m.graph.ops.back().grad_of.rfind("conv1.", 0) == 0);
}

TEST_CASE("backward ops of RGCN (segment_matmul, with an empty relation) equal finite differences", "[training][autodiff][unit]") {
  // Three relations over the two molecules' 22 edges, relation 1 given to none: its weight's gradient is 0.
  graphs::EdgeList edges = two_molecules();
  edges.num_relations = 3;
  for (std::size_t e = 0; e < edges.src.size(); ++e) edges.edge_type.push_back(e % 3 == 1 ? 2 : 0);
  LayerSpec a = layer(LayerKind::rgcn, "rgcn1", 5);
  a.activation = UnaryFn::relu;
  const Model m = check_gradients({a, layer(LayerKind::rgcn, "rgcn2", 3)}, false, edges);
  std::size_t input_grads = 0, weight_grads = 0;
  for (const Op& op : m.graph.ops) {
    if (op.kind != OpKind::segment_matmul || op.phase != OpPhase::backward) continue;
    CHECK(op.shape.num_segments == 3);
    if (op.transpose_weight) {
      ++input_grads;
      CHECK(op.name == op.grad_of + ".grad.input");
    }
    if (op.transpose_input) {
      ++weight_grads;
      CHECK(op.name == op.grad_of + ".grad.weight");
      CHECK(op.output_rows() == 3 * op.shape.num_features);
    }
  }
  CHECK(input_grads == 1);  // rgcn1's x_j is the features, which need no gradient
  CHECK(weight_grads == 2);
  // The empty relation's weight gradient is exactly zero; the others' are not.
  TensorValues values = m.values;
  for (const Op& op : m.graph.ops) values.set_f32(op.output, reference::compute(op, values));
  for (const auto& [param, grad_tensor] : m.grads) {
    if (m.graph.tensor(param).shape.size() != 3) continue;
    const std::vector<float>& grad = values.f32(grad_tensor);
    const std::size_t block = grad.size() / 3;
    INFO(m.graph.tensor(param).name);
    for (std::size_t i = 0; i < block; ++i) CHECK(grad[block + i] == 0.0f);
    CHECK(std::any_of(grad.begin(), grad.begin() + static_cast<std::ptrdiff_t>(block), [](float v) { return v != 0.0f; }));
  }
}

TEST_CASE("a transposed segment_matmul is refused by the forward-only paths and its backward is not lowered", "[training][autodiff][unit]") {
  OpGraph g;
  const TensorId x = g.add_tensor({"x", {4, 2}, DType::float32});
  const TensorId off = g.add_tensor({"offsets", {3}, DType::int32});
  const TensorId gr = g.add_tensor({"g", {4, 3}, DType::float32});
  Op op;
  op.name = "w_grad";
  op.kind = OpKind::segment_matmul;
  op.input = x;
  op.indices = off;
  op.weight = gr;
  op.transpose_input = true;
  op.shape.num_inputs = 4;
  op.shape.num_features = 2;
  op.shape.out_features = 3;
  op.shape.num_segments = 2;
  const TensorId out = g.add_op(op);
  CHECK(g.tensor(out).shape == std::vector<std::int64_t>{4, 3});
  const Op& added = g.ops.back();
  CHECK(added.flops() == 2.0 * 4 * 2 * 3);
  CHECK(added.min_bytes_read() == (4 * 2 + 4 * 3) * 4 + 3 * 4);
  CHECK(added.min_bytes_written() == 2 * 2 * 3 * 4);
  REQUIRE_THROWS_WITH(require_forward_op(added, "test"), Catch::Contains("transposed segment_matmul"));
  const std::set<TensorId> params{x};
  REQUIRE_THROWS_WITH(training::append_backward(g, 1, out, out, params), Catch::Contains("not lowered"));
}
