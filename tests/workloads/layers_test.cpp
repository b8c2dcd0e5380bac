// GNN layers lowered to the op graph: each lowered layer, evaluated op by op with the reference
// (ir/reference), equals a direct implementation of the PyG layer written here with plain loops
// over a small hand-made graph; FLOP totals follow workloads.md section 3. The workload format's model
// and schnet_block entries and their errors are in model_spec_test.cpp.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "ir/reference/reference.hpp"
#include "workloads/layers/layers.hpp"
#include "workloads/layers/model_spec.hpp"
#include "workloads/workload.hpp"
#include "tests/support/tensor_named.hpp"
#include "tests/support/test_support.hpp"

using namespace tilesim;
using namespace tilesim::workloads;
using namespace tilesim::workloads::layers;
using nlohmann::json;
using Catch::Matchers::Contains;

namespace {

using Matrix = std::vector<std::vector<double>>;  // rows of a [rows, cols] tensor

// 6 nodes: a triangle 0->1->2->0, a duplicate 0->1, a self-loop 1->1, 3->1, 5->4, node 4 has only an
// in-edge and no node points at 3 or 5 (empty rows in every scatter without self-loops).
graphs::EdgeList small_graph() {
  graphs::EdgeList g;
  g.num_nodes = 6;
  g.src = {0, 1, 2, 0, 1, 3, 5, 2};
  g.dst = {1, 2, 0, 1, 1, 1, 4, 4};
  return g;
}

struct Lowered {
  OpGraph graph;
  TensorValues values;  // inputs and, after evaluate(), every op's output
  TensorId output = -1;
};

Lowered lower(const LayerSpec& spec, const graphs::EdgeList& edges, std::int64_t in_features, std::uint64_t seed = 3) {
  Lowered l;
  std::vector<InputFill> fills;
  Lowering lowering(l.graph, fills, edges, seed);
  l.output = lower_model(lowering, {spec}, in_features);
  fill_inputs(l.values, l.graph, fills, seed);
  return l;
}

void evaluate(Lowered& l) {
  for (const Op& op : l.graph.ops) l.values.set_f32(op.output, reference::compute(op, l.values));
}

using tilesim_test::tensor_named;

Matrix matrix(const Lowered& l, const std::string& name) {
  const TensorId id = tensor_named(l.graph, name);
  const auto& shape = l.graph.tensor(id).shape;
  const auto& v = l.values.f32(id);
  const std::int64_t cols = shape.size() > 1 ? shape[1] : 1;
  Matrix m(static_cast<std::size_t>(shape[0]), std::vector<double>(static_cast<std::size_t>(cols)));
  for (std::int64_t r = 0; r < shape[0]; ++r)
    for (std::int64_t c = 0; c < cols; ++c) m[r][c] = v[static_cast<std::size_t>(r * cols + c)];
  return m;
}

std::vector<double> vec(const Lowered& l, const std::string& name) {
  const auto& v = l.values.f32(tensor_named(l.graph, name));
  return {v.begin(), v.end()};
}

Matrix linear(const Matrix& x, const Matrix& w, const std::vector<double>& bias = {}) {
  Matrix out(x.size(), std::vector<double>(w[0].size(), 0.0));
  for (std::size_t r = 0; r < x.size(); ++r)
    for (std::size_t o = 0; o < w[0].size(); ++o) {
      double s = bias.empty() ? 0.0 : bias[o];
      for (std::size_t k = 0; k < w.size(); ++k) s += x[r][k] * w[k][o];
      out[r][o] = s;
    }
  return out;
}

Matrix add(const Matrix& a, const Matrix& b) {
  Matrix out = a;
  for (std::size_t r = 0; r < a.size(); ++r)
    for (std::size_t c = 0; c < a[r].size(); ++c) out[r][c] += b[r][c];
  return out;
}

double ssp(double x) { return std::log1p(std::exp(x)) - std::log(2.0); }

void require_close(const Lowered& l, const Matrix& expected) {
  const auto& got = l.values.f32(l.output);
  const auto& shape = l.graph.tensor(l.output).shape;
  REQUIRE(shape[0] == static_cast<std::int64_t>(expected.size()));
  REQUIRE(shape[1] == static_cast<std::int64_t>(expected[0].size()));
  double scale = 0;
  for (const auto& row : expected)
    for (double v : row) scale = std::max(scale, std::abs(v));
  for (std::size_t r = 0; r < expected.size(); ++r)
    for (std::size_t c = 0; c < expected[r].size(); ++c) {
      INFO("row " << r << " column " << c);
      CHECK(got[r * expected[r].size() + c] == Approx(expected[r][c]).margin(1e-5 * std::max(1.0, scale)).epsilon(1e-4));
    }
}

double group_flops(const OpGraph& g, const OpGroup& group) {
  double f = 0;
  for (std::size_t i = group.first_op; i < group.first_op + group.op_count; ++i) f += g.ops[i].flops();
  return f;
}

LayerSpec layer(LayerKind kind, std::int64_t out) {
  LayerSpec s;
  s.kind = kind;
  s.name = to_string(kind);
  s.out_features = out;
  return s;
}

// Edges with one self-loop per node and no other (PyG add_remaining_self_loops).
void with_self_loops(const graphs::EdgeList& g, std::vector<int>& src, std::vector<int>& dst) {
  for (std::size_t e = 0; e < g.src.size(); ++e)
    if (g.src[e] != g.dst[e]) {
      src.push_back(g.src[e]);
      dst.push_back(g.dst[e]);
    }
  for (int n = 0; n < g.num_nodes; ++n) {
    src.push_back(n);
    dst.push_back(n);
  }
}

// GINConv's input to its nn on the 4-feature small graph: the sum over in-edges plus (1 + eps) * x.
Matrix gin_combined(const graphs::EdgeList& g, const Matrix& x, double one_plus_eps) {
  Matrix z(6, std::vector<double>(4, 0.0));
  for (std::size_t e = 0; e < g.src.size(); ++e)
    for (int c = 0; c < 4; ++c) z[g.dst[e]][c] += x[g.src[e]][c];
  for (int n = 0; n < 6; ++n)
    for (int c = 0; c < 4; ++c) z[n][c] += one_plus_eps * x[n][c];
  return z;
}

}  // namespace

TEST_CASE("GCN layer equals PyG GCNConv computed directly", "[layers][unit]") {
  const auto g = small_graph();
  auto l = lower(layer(LayerKind::gcn, 3), g, 4);
  evaluate(l);
  const Matrix x = matrix(l, "x"), w = matrix(l, "gcn.weight");
  const Matrix bias = matrix(l, "gcn.bias");
  std::vector<int> src, dst;
  with_self_loops(g, src, dst);
  std::vector<double> deg(6, 0.0);
  for (int d : dst) deg[d] += 1;
  const Matrix h = linear(x, w);
  Matrix out(6, std::vector<double>(3, 0.0));
  for (std::size_t e = 0; e < src.size(); ++e)
    for (int c = 0; c < 3; ++c) out[dst[e]][c] += h[src[e]][c] / std::sqrt(deg[src[e]] * deg[dst[e]]);
  for (auto& row : out)
    for (int c = 0; c < 3; ++c) row[c] += bias[0][c];
  require_close(l, out);
}

TEST_CASE("SAGE layer equals PyG SAGEConv (mean) computed directly", "[layers][unit]") {
  const auto g = small_graph();
  auto l = lower(layer(LayerKind::sage, 3), g, 4);
  evaluate(l);
  const Matrix x = matrix(l, "x");
  Matrix mean(6, std::vector<double>(4, 0.0));
  std::vector<double> count(6, 0.0);
  for (std::size_t e = 0; e < g.src.size(); ++e) {
    count[g.dst[e]] += 1;
    for (int c = 0; c < 4; ++c) mean[g.dst[e]][c] += x[g.src[e]][c];
  }
  for (int n = 0; n < 6; ++n)
    for (int c = 0; c < 4; ++c) mean[n][c] = count[n] > 0 ? mean[n][c] / count[n] : 0.0;
  const Matrix out = add(linear(mean, matrix(l, "sage.lin_l.weight"), vec(l, "sage.lin_l.bias")), linear(x, matrix(l, "sage.lin_r.weight")));
  require_close(l, out);
}

TEST_CASE("GIN layer equals PyG GINConv with its MLP computed directly", "[layers][unit]") {
  const auto g = small_graph();
  LayerSpec spec = layer(LayerKind::gin, 3);
  spec.hidden_features = 5;
  spec.eps = 0.25f;
  auto l = lower(spec, g, 4);
  evaluate(l);
  const Matrix z = gin_combined(g, matrix(l, "x"), 1.25);
  Matrix h = linear(z, matrix(l, "gin.mlp0.weight"), vec(l, "gin.mlp0.bias"));
  for (auto& row : h)
    for (auto& v : row) v = std::max(v, 0.0);
  require_close(l, linear(h, matrix(l, "gin.mlp2.weight"), vec(l, "gin.mlp2.bias")));
  REQUIRE(l.graph.tensor(l.output).shape == std::vector<std::int64_t>{6, 3});
}

TEST_CASE("GIN layer with nn = one Linear equals GINConv(torch.nn.Linear) computed directly", "[layers][unit]") {
  const auto g = small_graph();
  LayerSpec spec = layer(LayerKind::gin, 3);
  spec.gin_nn = GinNn::linear;
  spec.eps = -0.5f;
  auto l = lower(spec, g, 4);
  evaluate(l);
  const Matrix z = gin_combined(g, matrix(l, "x"), 0.5);
  require_close(l, linear(z, matrix(l, "gin.nn.weight"), vec(l, "gin.nn.bias")));
  REQUIRE(l.graph.groups.at(0).kind == "gin_linear");
  // No MLP: neither of its weights exists.
  for (const auto& t : l.graph.tensors) CHECK(t.name.find("mlp") == std::string::npos);
}

TEST_CASE("Linear layer equals torch.nn.Linear on every node row, with its activation", "[layers][unit]") {
  const auto g = small_graph();
  LayerSpec spec = layer(LayerKind::linear, 3);
  spec.activation = UnaryFn::shifted_softplus;
  auto l = lower(spec, g, 4);
  evaluate(l);
  Matrix h = linear(matrix(l, "x"), matrix(l, "linear.weight"), vec(l, "linear.bias"));
  for (auto& row : h)
    for (auto& v : row) v = std::log1p(std::exp(v)) - std::log(2.0);
  require_close(l, h);
  REQUIRE(l.graph.groups.at(0).kind == "linear");
  // It reads no edges: no index tensor is made.
  for (const auto& t : l.graph.tensors) CHECK(t.dtype != DType::int32);
}

TEST_CASE("GAT layer equals PyG GATConv (heads, LeakyReLU, edge softmax) computed directly", "[layers][unit]") {
  const auto g = small_graph();
  LayerSpec spec = layer(LayerKind::gat, 2);
  spec.heads = 3;
  auto l = lower(spec, g, 4);
  evaluate(l);
  const int H = 3, C = 2;
  const Matrix x = matrix(l, "x");
  const Matrix h = linear(x, matrix(l, "gat.weight"));
  const Matrix as = matrix(l, "gat.att_src"), ad = matrix(l, "gat.att_dst");
  // The block-diagonal matrices hold att[h, c] at (h*C + c, h) and zeros elsewhere.
  for (int r = 0; r < H * C; ++r)
    for (int k = 0; k < H; ++k)
      if (r / C != k) REQUIRE(as[r][k] == 0.0);
  std::vector<int> src, dst;
  with_self_loops(g, src, dst);
  const std::size_t E = src.size();
  Matrix score(E, std::vector<double>(H));
  for (std::size_t e = 0; e < E; ++e)
    for (int k = 0; k < H; ++k) {
      double a = 0;
      for (int c = 0; c < C; ++c) a += h[src[e]][k * C + c] * as[k * C + c][k] + h[dst[e]][k * C + c] * ad[k * C + c][k];
      score[e][k] = a >= 0 ? a : 0.2 * a;
    }
  Matrix out(6, std::vector<double>(H * C, 0.0));
  for (int n = 0; n < 6; ++n)
    for (int k = 0; k < H; ++k) {
      double mx = -INFINITY, sum = 0;
      for (std::size_t e = 0; e < E; ++e)
        if (dst[e] == n) mx = std::max(mx, score[e][k]);
      for (std::size_t e = 0; e < E; ++e)
        if (dst[e] == n) sum += std::exp(score[e][k] - mx);
      for (std::size_t e = 0; e < E; ++e)
        if (dst[e] == n)
          for (int c = 0; c < C; ++c) out[n][k * C + c] += std::exp(score[e][k] - mx) / sum * h[src[e]][k * C + c];
    }
  const Matrix bias = matrix(l, "gat.bias");
  for (auto& row : out)
    for (int c = 0; c < H * C; ++c) row[c] += bias[0][c];
  require_close(l, out);
}

TEST_CASE("SchNet interaction block equals PyG InteractionBlock computed directly", "[layers][unit]") {
  const auto g = small_graph();
  LayerSpec spec = layer(LayerKind::schnet, 4);
  spec.filters = 3;
  spec.num_gaussians = 5;
  spec.cutoff = 6.0f;
  auto l = lower(spec, g, 4);
  evaluate(l);
  const Matrix x = matrix(l, "x");
  const std::vector<double> d = vec(l, "edges.distance");
  const std::size_t E = g.src.size();
  REQUIRE(d.size() == E);
  for (double v : d) {
    CHECK(v >= 1.0);
    CHECK(v < 6.0);
  }
  // GaussianSmearing(0, 6, 5): offsets 0, 1.5, ..., 6; coeff -0.5 / 1.5^2.
  Matrix attr(E, std::vector<double>(5));
  for (std::size_t e = 0; e < E; ++e)
    for (int k = 0; k < 5; ++k) attr[e][k] = std::exp(-0.5 / (1.5 * 1.5) * std::pow(d[e] - 1.5 * k, 2));
  CHECK(matrix(l, "edges.gaussians5")[E - 1][2] == Approx(attr[E - 1][2]).epsilon(1e-5));
  Matrix f = linear(attr, matrix(l, "schnet.mlp0.weight"), vec(l, "schnet.mlp0.bias"));
  for (auto& row : f)
    for (auto& v : row) v = ssp(v);
  f = linear(f, matrix(l, "schnet.mlp2.weight"), vec(l, "schnet.mlp2.bias"));
  for (std::size_t e = 0; e < E; ++e)
    for (auto& v : f[e]) v *= 0.5 * (std::cos(d[e] * M_PI / 6.0) + 1.0);
  const Matrix h = linear(x, matrix(l, "schnet.lin1.weight"));
  Matrix agg(6, std::vector<double>(3, 0.0));
  for (std::size_t e = 0; e < E; ++e)
    for (int c = 0; c < 3; ++c) agg[g.dst[e]][c] += h[g.src[e]][c] * f[e][c];
  Matrix y = linear(agg, matrix(l, "schnet.lin2.weight"), vec(l, "schnet.lin2.bias"));
  for (auto& row : y)
    for (auto& v : row) v = ssp(v);
  require_close(l, linear(y, matrix(l, "schnet.lin.weight"), vec(l, "schnet.lin.bias")));
}

TEST_CASE("RGCN layer equals PyG RGCNConv (segment_matmul path) computed directly", "[layers][unit]") {
  auto g = small_graph();
  g.edge_type = {1, 0, 2, 1, 0, 2, 1, 0};
  g.num_relations = 3;
  auto l = lower(layer(LayerKind::rgcn, 3), g, 4);
  evaluate(l);
  const Matrix x = matrix(l, "x"), root = matrix(l, "rgcn.root");
  const std::vector<double> w = vec(l, "rgcn.weight");  // [R, 4, 3]
  // The edges are sorted by relation with offsets 0, 3, 6, 8.
  const auto& offsets = l.values.i32(tensor_named(l.graph, "edges_by_relation3.offsets"));
  REQUIRE(offsets == std::vector<std::int32_t>{0, 3, 6, 8});
  Matrix sum(6, std::vector<double>(3, 0.0));
  std::vector<double> count(6, 0.0);
  for (std::size_t e = 0; e < g.src.size(); ++e) {
    count[g.dst[e]] += 1;
    for (int o = 0; o < 3; ++o)
      for (int k = 0; k < 4; ++k) sum[g.dst[e]][o] += x[g.src[e]][k] * w[(g.edge_type[e] * 4 + k) * 3 + o];
  }
  Matrix out = linear(x, root);
  const Matrix bias = matrix(l, "rgcn.bias");
  for (int n = 0; n < 6; ++n)
    for (int o = 0; o < 3; ++o) out[n][o] += (count[n] > 0 ? sum[n][o] / count[n] : 0.0) + bias[0][o];
  require_close(l, out);
}

TEST_CASE("FiLM layer equals PyG FiLMConv (one relation, ReLU) computed directly", "[layers][unit]") {
  const auto g = small_graph();
  for (const MessageAggregation aggr : {MessageAggregation::mean, MessageAggregation::add, MessageAggregation::max}) {
    LayerSpec spec = layer(LayerKind::film, 3);
    spec.aggregation = aggr;
    auto l = lower(spec, g, 4);
    evaluate(l);
    const Matrix x = matrix(l, "x");
    auto relu = [](Matrix m) {
      for (auto& row : m)
        for (auto& v : row) v = std::max(v, 0.0);
      return m;
    };
    // The skip term: relu(gamma_s * lin_skip(x) + beta_s), film_skip's halves without bias.
    const Matrix beta_s = linear(x, matrix(l, "film.film_skip.beta.weight"));
    const Matrix gamma_s = linear(x, matrix(l, "film.film_skip.gamma.weight"));
    const Matrix h_s = linear(x, matrix(l, "film.lin_skip.weight"));
    Matrix skip(6, std::vector<double>(3));
    for (int n = 0; n < 6; ++n)
      for (int c = 0; c < 3; ++c) skip[n][c] = gamma_s[n][c] * h_s[n][c] + beta_s[n][c];
    skip = relu(skip);
    // The messages relu(gamma_i * lins[0](x)_j + beta_i), aggregated by destination (0 where none).
    const Matrix beta = linear(x, matrix(l, "film.film.beta.weight"), vec(l, "film.film.beta.bias"));
    const Matrix gamma = linear(x, matrix(l, "film.film.gamma.weight"), vec(l, "film.film.gamma.bias"));
    const Matrix h = linear(x, matrix(l, "film.lin.weight"));
    Matrix aggregated(6, std::vector<double>(3, 0.0));
    std::vector<int> count(6, 0);
    std::vector<std::vector<bool>> seen(6, std::vector<bool>(3, false));
    for (std::size_t e = 0; e < g.src.size(); ++e) {
      const int i = g.dst[e], j = g.src[e];
      ++count[i];
      for (int c = 0; c < 3; ++c) {
        const double m = std::max(gamma[i][c] * h[j][c] + beta[i][c], 0.0);
        double& a = aggregated[i][c];
        a = aggr == MessageAggregation::max ? (seen[i][c] ? std::max(a, m) : m) : a + m;
        seen[i][c] = true;
      }
    }
    if (aggr == MessageAggregation::mean)
      for (int n = 0; n < 6; ++n)
        for (int c = 0; c < 3 && count[n] > 0; ++c) aggregated[n][c] /= count[n];
    require_close(l, add(skip, aggregated));
    REQUIRE(l.graph.groups.at(0).kind == "film");
  }
}

TEST_CASE("CGConv layer equals PyG CGConv (no edge features, add aggregation) computed directly", "[layers][unit]") {
  const auto g = small_graph();
  for (const MessageAggregation aggr : {MessageAggregation::add, MessageAggregation::mean}) {
    LayerSpec spec = layer(LayerKind::cgconv, 4);
    if (aggr == MessageAggregation::mean) spec.aggregation = aggr;
    auto l = lower(spec, g, 4);
    evaluate(l);
    const Matrix x = matrix(l, "x");
    // lin_f and lin_s on z = cat([x_i, x_j]): the [8, 4] weight's rows 0-3 meet x_i, rows 4-7 x_j.
    auto stacked = [&](const std::string& name) {
      Matrix w = matrix(l, "cgconv." + name + ".weight_i");
      for (const auto& row : matrix(l, "cgconv." + name + ".weight_j")) w.push_back(row);
      return w;
    };
    const Matrix wf = stacked("lin_f"), ws = stacked("lin_s");
    const std::vector<double> bf = vec(l, "cgconv.lin_f.bias"), bs = vec(l, "cgconv.lin_s.bias");
    Matrix aggregated(6, std::vector<double>(4, 0.0));
    std::vector<int> count(6, 0);
    for (std::size_t e = 0; e < g.src.size(); ++e) {
      const int i = g.dst[e], j = g.src[e];
      Matrix z(1);
      z[0] = x[i];
      z[0].insert(z[0].end(), x[j].begin(), x[j].end());
      const Matrix f = linear(z, wf, bf), s = linear(z, ws, bs);
      ++count[i];
      for (int c = 0; c < 4; ++c) aggregated[i][c] += (1.0 / (1.0 + std::exp(-f[0][c]))) * std::log1p(std::exp(s[0][c]));
    }
    if (aggr == MessageAggregation::mean)
      for (int n = 0; n < 6; ++n)
        for (int c = 0; c < 4 && count[n] > 0; ++c) aggregated[n][c] /= count[n];
    require_close(l, add(aggregated, x));
    REQUIRE(l.graph.groups.at(0).kind == "cgconv");
  }
}

TEST_CASE("A model stacks layers with activations, one group per layer, sharing edge tensors", "[layers][unit]") {
  const auto g = small_graph();
  OpGraph graph;
  std::vector<InputFill> fills;
  Lowering lowering(graph, fills, g, 1);
  LayerSpec a = layer(LayerKind::gcn, 5);
  a.name = "conv1";
  a.activation = UnaryFn::relu;
  LayerSpec b = layer(LayerKind::gcn, 2);
  b.name = "conv2";
  const TensorId out = lower_model(lowering, {a, b}, 4);
  REQUIRE(graph.groups.size() == 2);
  CHECK(graph.groups[0].name == "conv1");
  CHECK(graph.groups[0].kind == "gcn");
  CHECK(graph.groups[1].first_op == graph.groups[0].op_count);
  CHECK(graph.groups[0].op_count + graph.groups[1].op_count == graph.ops.size());
  // conv1 ends with its relu; conv2 reads it.
  const Op& relu = graph.ops[graph.groups[0].op_count - 1];
  CHECK(relu.kind == OpKind::unary);
  CHECK(relu.unary == UnaryFn::relu);
  CHECK(graph.tensor(out).shape == std::vector<std::int64_t>{6, 2});
  // One set of self-loop edge tensors for both layers.
  int edge_tensors = 0;
  for (TensorId t : graph.graph_inputs())
    if (graph.tensor(t).dtype == DType::int32) ++edge_tensors;
  CHECK(edge_tensors == 2);
  // Every graph input has a fill.
  CHECK(fills.size() == graph.graph_inputs().size());
}

TEST_CASE("Layer FLOP totals follow workloads.md section 3", "[layers][unit]") {
  // Larger widths than the value tests, only the graph is built.
  const auto g = small_graph();
  const double N = 6, E = 8, E1 = 7 + 6;  // E' = non-loop edges + one loop per node
  const double Fi = 16, Fo = 8;
  auto flops_of = [&](const LayerSpec& spec, std::int64_t in) {
    OpGraph graph;
    std::vector<InputFill> fills;
    Lowering l(graph, fills, g, 1);
    lower_model(l, {spec}, in);
    return group_flops(graph, graph.groups.at(0));
  };
  // workloads.md: 2 N Fi Fo + 2 E' Fo; plus the normalisation (E' degree counts, N rsqrt, E' multiplies)
  // and the bias (N Fo) that it leaves out.
  CHECK(flops_of(layer(LayerKind::gcn, 8), 16) == 2 * N * Fi * Fo + 2 * E1 * Fo + (2 * E1 + N) + N * Fo);
  // workloads.md: E Fi + N Fi + 4 N Fi Fo; plus lin_l's bias and the root add (2 N Fo).
  CHECK(flops_of(layer(LayerKind::sage, 8), 16) == E * Fi + N * Fi + 4 * N * Fi * Fo + 2 * N * Fo);
  // workloads.md: E Fi + 2 N Fi + 2 N Fh (Fi + Fo) + O(N Fh): the O(N Fh) is bias and relu (2 N Fh), plus N Fo bias.
  LayerSpec gin = layer(LayerKind::gin, 8);
  gin.hidden_features = 32;
  const double Fh = 32;
  CHECK(flops_of(gin, 16) == E * Fi + 2 * N * Fi + 2 * N * Fh * (Fi + Fo) + 2 * N * Fh + N * Fo);
  // workloads.md: 2 N Fi H C + 4 N H C + ~10 E' H + 2 E' H C. Here the attention dot products are
  // matmuls with block-diagonal [HC, H] matrices (4 N H C * H), the softmax and logits 7 E' H, plus bias N H C.
  LayerSpec gat = layer(LayerKind::gat, 4);
  gat.heads = 2;
  const double H = 2, C = 4;
  CHECK(flops_of(gat, 16) == 2 * N * Fi * H * C + 4 * N * H * C * H + 7 * E1 * H + 2 * E1 * H * C + N * H * C);
  // workloads.md: 2 E Ff (G + Ff + 1.5) + 4 N F Ff + 2 N F^2: the 1.5 E Ff is the cutoff multiply, message
  // multiply and scatter (3 E Ff / 2 per factor 2); added here: E cosines, filter-network biases and
  // softplus (3 E Ff), and node-side biases and softplus (3 N F).
  LayerSpec schnet = layer(LayerKind::schnet, 16);
  schnet.filters = 8;
  schnet.num_gaussians = 10;
  const double F = 16, Ff = 8, G = 10;
  CHECK(flops_of(schnet, 16) == 2 * E * Ff * (G + Ff + 1.5) + 4 * N * F * Ff + 2 * N * F * F + E + 3 * E * Ff + 3 * N * F);
  // workloads.md: 2 E Fi Fo (segment matmul) + E Fo + N Fo (mean) + 2 N Fi Fo (root); plus root add and bias.
  LayerSpec rgcn = layer(LayerKind::rgcn, 8);
  rgcn.num_relations = 4;
  CHECK(flops_of(rgcn, 16) == 2 * E * Fi * Fo + E * Fo + N * Fo + 2 * N * Fi * Fo + 2 * N * Fo);
}

TEST_CASE("Per-layer op counts", "[layers][unit]") {
  const auto g = small_graph();
  auto count = [&](LayerSpec spec) {
    OpGraph graph;
    std::vector<InputFill> fills;
    Lowering l(graph, fills, g, 1);
    spec.num_relations = spec.kind == LayerKind::rgcn ? 2 : 0;
    lower_model(l, {spec}, 4);
    return graph.groups.at(0).op_count;
  };
  CHECK(count(layer(LayerKind::gcn, 4)) == 10);
  CHECK(count(layer(LayerKind::sage, 4)) == 5);
  CHECK(count(layer(LayerKind::gin, 4)) == 7);
  CHECK(count(layer(LayerKind::gat, 4)) == 18);
  CHECK(count(layer(LayerKind::schnet, 4)) == 12);
  CHECK(count(layer(LayerKind::rgcn, 4)) == 6);
  CHECK(count(layer(LayerKind::linear, 4)) == 1);
  // 6 matmuls, 5 binaries, 2 relus, 3 gathers, 1 scatter.
  CHECK(count(layer(LayerKind::film, 4)) == 17);
  // 2 gathers, 4 matmuls, 2 adds, sigmoid, softplus, multiply, scatter, the residual add.
  CHECK(count(layer(LayerKind::cgconv, 4)) == 13);
  LayerSpec gin_linear = layer(LayerKind::gin, 4);
  gin_linear.gin_nn = GinNn::linear;
  CHECK(count(gin_linear) == 5);
  LayerSpec no_bias = layer(LayerKind::gcn, 4);
  no_bias.bias = false;
  CHECK(count(no_bias) == 9);
}
