// What every layer shares: graph inputs with their fills, the edge variants, op builders, and the
// model and schnet_block drivers that wrap layers in OpGroups.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "common/error.hpp"
#include "workloads/layers/init_bounds.hpp"
#include "workloads/layers/layers.hpp"
#include "workloads/random_streams.hpp"

namespace tilesim::workloads::layers {

namespace {

struct KindName {
  LayerKind kind;
  const char* name;
};
constexpr KindName layer_names[] = {{LayerKind::gcn, "gcn"},       {LayerKind::sage, "sage"},
                                    {LayerKind::gin, "gin"},       {LayerKind::gat, "gat"},
                                    {LayerKind::schnet, "schnet"}, {LayerKind::rgcn, "rgcn"},
                                    {LayerKind::linear, "linear"}, {LayerKind::pool, "pool"},
                                    {LayerKind::film, "film"},     {LayerKind::cgconv, "cgconv"}};

const std::vector<std::int64_t>& shape_of(const OpGraph& g, TensorId t) { return g.tensor(t).shape; }

std::vector<std::int32_t> to_i32(const std::vector<std::int64_t>& v) {
  return std::vector<std::int32_t>(v.begin(), v.end());
}

}  // namespace

MessageAggregation message_aggregation(const LayerSpec& spec) {
  if (spec.aggregation) return *spec.aggregation;
  return spec.kind == LayerKind::cgconv ? MessageAggregation::add : MessageAggregation::mean;
}

OpKind aggregation_scatter_kind(MessageAggregation aggregation) {
  switch (aggregation) {
    case MessageAggregation::add: return OpKind::scatter_add;
    case MessageAggregation::max: return OpKind::scatter_max;
    case MessageAggregation::mean: break;
  }
  return OpKind::scatter_mean;
}

std::string group_kind(const LayerSpec& spec) {
  if (spec.kind == LayerKind::gin && spec.gin_nn == GinNn::linear) return "gin_linear";
  if (spec.kind == LayerKind::gat && spec.gat_attention == GatAttention::per_edge) return "gat_per_edge";
  return to_string(spec.kind);
}

std::string to_string(LayerKind kind) {
  for (const auto& e : layer_names)
    if (e.kind == kind) return e.name;
  throw std::logic_error("to_string: unknown layer kind");
}

std::optional<LayerKind> layer_kind_from_string(const std::string& name) {
  for (const auto& e : layer_names)
    if (name == e.name) return e.kind;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------------
// Graph inputs.

TensorId Lowering::input(const std::string& name, std::vector<std::int64_t> shape, InputFill::Kind kind, double bound,
                         std::int64_t block_rows) {
  const bool parameter = kind == InputFill::Kind::uniform || kind == InputFill::Kind::block_diagonal;
  const bool master = parameter && master_dtype && *master_dtype != value_dtype;
  // A master weight keeps the parameter's name, so its values come from the same stream as the value
  // dtype's parameter would (a float32 and a half run start from the same weights).
  const TensorId id = graph_.add_tensor({name, shape, master ? *master_dtype : value_dtype});
  InputFill fill;
  fill.tensor = id;
  fill.kind = kind;
  fill.bound = bound;
  fill.block_rows = block_rows;
  // A parameter lives on the device between steps (PopTorch copies the weights there once).
  fill.device_resident = parameter;
  fills_.push_back(std::move(fill));
  if (!master) return id;
  Op cast;
  cast.name = name + ".cast";
  cast.kind = OpKind::cast;
  cast.input = id;
  cast.shape.num_features = shape.back();
  cast.shape.num_inputs = graph_.tensor(id).elements() / shape.back();
  cast.scalar = 1.0f;
  return op(std::move(cast));
}

TensorId Lowering::given_i32(const std::string& name, std::vector<std::int32_t> values) {
  const TensorId id = graph_.add_tensor({name, {static_cast<std::int64_t>(values.size())}, DType::int32, true});
  InputFill fill;
  fill.tensor = id;
  fill.kind = InputFill::Kind::given_i32;
  fill.i32 = std::move(values);
  fills_.push_back(std::move(fill));
  return id;
}

TensorId Lowering::given_f32(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> values) {
  return given_f32(name, std::move(shape), std::move(values), value_dtype);
}

TensorId Lowering::given_f32(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> values, DType dtype) {
  const TensorId id = graph_.add_tensor({name, std::move(shape), dtype});
  InputFill fill;
  fill.tensor = id;
  fill.kind = InputFill::Kind::given_f32;
  fill.f32 = std::move(values);
  fills_.push_back(std::move(fill));
  return id;
}

void Lowering::keep_on_device(TensorId tensor) {
  for (InputFill& fill : fills_)
    if (fill.tensor == tensor) fill.device_resident = true;
}

std::int64_t host_input_bytes(const OpGraph& graph, const std::vector<InputFill>& fills) {
  std::int64_t bytes = 0;
  for (const InputFill& fill : fills)
    if (!fill.device_resident) bytes += graph.tensor(fill.tensor).bytes();
  return bytes;
}

// ---------------------------------------------------------------------------------------------------
// Edge variants.

const EdgeTensors& Lowering::raw() {
  auto it = variants_.find("raw");
  if (it != variants_.end()) return it->second;
  if (edges_.num_edges() == 0)
    throw InputError(source_file, "graph", "a graph with at least one edge (the layers gather and scatter over edges)", "0 edges");
  EdgeTensors e;
  e.src = given_i32("edges.src", edges_.src);
  e.dst = given_i32("edges.dst", edges_.dst);
  e.num_edges = edges_.num_edges();
  return variants_.emplace("raw", e).first->second;
}

const EdgeTensors& Lowering::self_loops() {
  auto it = variants_.find("self_loops");
  if (it != variants_.end()) return it->second;
  // PyG: GCN's add_remaining_self_loops and GAT's remove_self_loops + add_self_loops both leave the
  // other edges in order followed by exactly one loop per node (all edge weights being 1).
  std::vector<std::int32_t> src, dst;
  src.reserve(static_cast<std::size_t>(edges_.num_edges() + edges_.num_nodes));
  dst.reserve(src.capacity());
  for (std::size_t e = 0; e < edges_.src.size(); ++e) {
    if (edges_.src[e] == edges_.dst[e]) continue;
    src.push_back(edges_.src[e]);
    dst.push_back(edges_.dst[e]);
  }
  for (std::int64_t n = 0; n < edges_.num_nodes; ++n) {
    src.push_back(static_cast<std::int32_t>(n));
    dst.push_back(static_cast<std::int32_t>(n));
  }
  EdgeTensors e;
  e.num_edges = static_cast<std::int64_t>(src.size());
  e.src = given_i32("edges_self_loops.src", std::move(src));
  e.dst = given_i32("edges_self_loops.dst", std::move(dst));
  return variants_.emplace("self_loops", e).first->second;
}

const EdgeTensors& Lowering::by_relation(std::int32_t num_relations, const std::string& where) {
  const std::string key = "by_relation/" + std::to_string(num_relations);
  auto it = variants_.find(key);
  if (it != variants_.end()) return it->second;
  if (num_relations < 1)
    throw InputError(source_file, where, "a relation count >= 1 (the graph has no relation types: give \"num_relations\" here or in \"graph\")",
                     std::to_string(num_relations));
  std::vector<std::int32_t> type = edges_.edge_type;
  if (type.empty()) {
    // A graph without relation types gets them uniform at random, as PyG's RGCN benchmarks draw them.
    auto engine = streams::named_engine(seed_, "edges.relation_type/" + std::to_string(num_relations));
    type = streams::uniform_indices(engine, edges_.num_edges(), num_relations);
  } else if (edges_.num_relations != num_relations) {
    throw InputError(source_file, where, "num_relations equal to the graph's relation count " + std::to_string(edges_.num_relations),
                     std::to_string(num_relations));
  }
  // PyG RGCNConv sorts by type (index_sort) unless is_sorted; a stable sort keeps each relation's edges in
  // their original order, which only changes the float summation order, not the result's meaning.
  std::vector<std::size_t> perm(type.size());
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  std::stable_sort(perm.begin(), perm.end(), [&](std::size_t a, std::size_t b) { return type[a] < type[b]; });
  std::vector<std::int32_t> src(perm.size()), dst(perm.size());
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(num_relations) + 1, 0);
  for (std::size_t i = 0; i < perm.size(); ++i) {
    src[i] = edges_.src[perm[i]];
    dst[i] = edges_.dst[perm[i]];
    ++offsets[static_cast<std::size_t>(type[perm[i]]) + 1];
  }
  std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
  EdgeTensors e;
  e.num_edges = static_cast<std::int64_t>(src.size());
  e.num_relations = num_relations;
  const std::string prefix = "edges_by_relation" + std::to_string(num_relations);
  e.src = given_i32(prefix + ".src", std::move(src));
  e.dst = given_i32(prefix + ".dst", std::move(dst));
  e.relation_offsets = given_i32(prefix + ".offsets", to_i32(offsets));
  return variants_.emplace(key, e).first->second;
}

const EdgeTensors& Lowering::distance(float cutoff) {
  const std::string key = "distance";
  auto it = variants_.find(key);
  if (it != variants_.end()) return it->second;
  EdgeTensors e = raw();
  // Distances uniform in [1, cutoff): the hydronet schnet_block harness draws edge weights in [1, 6).
  auto engine = streams::named_engine(seed_, "edges.distance");
  e.distance = given_f32("edges.distance", {e.num_edges, 1}, streams::uniform_reals(engine, e.num_edges, 1.0, cutoff));
  // A SchNet model computes its edge distances from the positions on the device (PyG SchNet's forward):
  // given here without their cost, they never cross the host link.
  keep_on_device(e.distance);
  return variants_.emplace(key, e).first->second;
}

TensorId Lowering::gaussians(float cutoff, std::int64_t num_gaussians) {
  EdgeTensors& e = variants_.at("distance");
  char key[64];
  std::snprintf(key, sizeof key, "%lld/%g", static_cast<long long>(num_gaussians), static_cast<double>(cutoff));
  auto it = e.gaussians.find(key);
  if (it != e.gaussians.end()) return it->second;
  // PyG GaussianSmearing(start=0, stop=cutoff, num_gaussians): offsets linspace(0, cutoff, G),
  // coeff = -0.5 / (offset[1] - offset[0])^2, attr = exp(coeff * (d - offset)^2), in float32 as torch.
  const std::vector<float>* d = nullptr;
  for (const auto& f : fills_)
    if (f.tensor == e.distance) d = &f.f32;
  const std::int64_t g = num_gaussians;
  std::vector<float> offset(static_cast<std::size_t>(g));
  for (std::int64_t k = 0; k < g; ++k)
    offset[static_cast<std::size_t>(k)] =
        g == 1 ? 0.0f : static_cast<float>(static_cast<double>(cutoff) * static_cast<double>(k) / static_cast<double>(g - 1));
  const float step = g > 1 ? offset[1] - offset[0] : 1.0f;
  const float coeff = -0.5f / (step * step);
  std::vector<float> attr(static_cast<std::size_t>(e.num_edges * g));
  for (std::int64_t i = 0; i < e.num_edges; ++i)
    for (std::int64_t k = 0; k < g; ++k) {
      const float diff = (*d)[static_cast<std::size_t>(i)] - offset[static_cast<std::size_t>(k)];
      attr[static_cast<std::size_t>(i * g + k)] = std::exp(coeff * diff * diff);
    }
  const TensorId id = given_f32(std::string("edges.gaussians") + std::to_string(g), {e.num_edges, g}, std::move(attr));
  keep_on_device(id);  // the model's GaussianSmearing, on the device like the distances
  e.gaussians.emplace(key, id);
  return id;
}

// ---------------------------------------------------------------------------------------------------
// Op builders.

namespace {

// An op of `kind` reading the rows x features tensor x as its input, its shape taken from x's.
Op op_reading(const std::string& name, OpKind kind, const OpGraph& g, TensorId x) {
  Op op;
  op.name = name;
  op.kind = kind;
  op.input = x;
  op.shape.num_inputs = shape_of(g, x).at(0);
  op.shape.num_features = shape_of(g, x).at(1);
  return op;
}

}  // namespace

Op matmul(const std::string& name, const OpGraph& g, TensorId x, TensorId weight, TensorId bias) {
  Op op = op_reading(name, OpKind::matmul, g, x);
  op.weight = weight;
  op.bias = bias;
  op.shape.out_features = shape_of(g, weight).at(1);
  return op;
}

Op gather(const std::string& name, const OpGraph& g, TensorId table, TensorId indices) {
  Op op = op_reading(name, OpKind::gather, g, table);
  op.indices = indices;
  op.shape.num_outputs = shape_of(g, indices).at(0);
  return op;
}

Op scatter(const std::string& name, const OpGraph& g, OpKind kind, TensorId src, TensorId indices, std::int64_t rows) {
  Op op = op_reading(name, kind, g, src);
  op.indices = indices;
  op.shape.num_outputs = rows;
  return op;
}

Op degree_count(const std::string& name, const OpGraph& g, TensorId indices, std::int64_t rows) {
  Op op;
  op.name = name;
  op.kind = OpKind::degree_count;
  op.indices = indices;
  op.shape.num_inputs = shape_of(g, indices).at(0);
  op.shape.num_features = 1;
  op.shape.num_outputs = rows;
  return op;
}

Op unary(const std::string& name, const OpGraph& g, UnaryFn fn, TensorId x, float scalar) {
  Op op = op_reading(name, OpKind::unary, g, x);
  op.unary = fn;
  op.scalar = scalar;
  return op;
}

Op binary(const std::string& name, const OpGraph& g, BinaryFn fn, TensorId x, TensorId other) {
  Op op = op_reading(name, OpKind::binary, g, x);
  op.binary = fn;
  op.weight = other;
  op.shape.other_rows = shape_of(g, other).at(0);
  op.shape.other_groups = shape_of(g, other).at(1);
  return op;
}

Op segment_matmul(const std::string& name, const OpGraph& g, TensorId x, TensorId offsets, TensorId weight) {
  Op op = op_reading(name, OpKind::segment_matmul, g, x);
  op.indices = offsets;
  op.weight = weight;
  op.shape.num_segments = shape_of(g, weight).at(0);
  op.shape.out_features = shape_of(g, weight).at(2);
  return op;
}

Op segment_matmul_input_grad(const std::string& name, const OpGraph& g, TensorId grad, TensorId offsets, TensorId weight) {
  Op op = op_reading(name, OpKind::segment_matmul, g, grad);
  op.indices = offsets;
  op.weight = weight;
  op.transpose_weight = true;
  op.shape.num_segments = shape_of(g, weight).at(0);
  op.shape.out_features = shape_of(g, weight).at(1);
  return op;
}

Op segment_matmul_weight_grad(const std::string& name, const OpGraph& g, TensorId x, TensorId offsets, TensorId grad) {
  Op op = op_reading(name, OpKind::segment_matmul, g, x);
  op.indices = offsets;
  op.weight = grad;
  op.transpose_input = true;
  op.shape.num_segments = shape_of(g, offsets).at(0) - 1;
  op.shape.out_features = shape_of(g, grad).at(1);
  return op;
}

TensorId weighted_aggregate(Lowering& l, const std::string& p, TensorId h, const EdgeTensors& e, TensorId edge_weight) {
  OpGraph& g = l.graph();
  return aggregate_messages(l, p, l.op(gather(p + "gather_src", g, h, e.src)), e, edge_weight);
}

TensorId aggregate_messages(Lowering& l, const std::string& p, TensorId h_j, const EdgeTensors& e, TensorId edge_weight) {
  OpGraph& g = l.graph();
  const TensorId message = l.op(binary(p + "message", g, BinaryFn::multiply, h_j, edge_weight));
  return l.op(scatter(p + "aggregate", g, OpKind::scatter_add, message, e.dst, l.num_nodes()));
}

TensorId add_bias(Lowering& l, const std::string& p, TensorId result, std::int64_t width, std::int64_t fan_in) {
  const TensorId bias = l.input(p + "bias", {1, width}, InputFill::Kind::uniform, bias_bound(fan_in));
  return l.op(binary(p + "bias", l.graph(), BinaryFn::add, result, bias));
}

TensorId dropout(Lowering& l, const std::string& name, TensorId x, double p) {
  if (!l.training || p == 0) return x;
  OpGraph& g = l.graph();
  const std::vector<std::int64_t> shape = g.tensor(x).shape;
  std::int64_t count = 1;
  for (std::int64_t d : shape) count *= d;
  auto engine = streams::named_engine(l.seed(), name + ".mask");
  std::vector<float> mask = streams::uniform_reals(engine, count, 0.0, 1.0);
  const float kept = static_cast<float>(1.0 / (1.0 - p));
  for (float& m : mask) m = m < p ? 0.0f : kept;
  const TensorId m = l.given_f32(name + ".mask", shape, std::move(mask), g.tensor(x).dtype);
  // PopTorch draws the mask on the device: it never crosses the host link.
  l.keep_on_device(m);
  return l.op(binary(name, g, BinaryFn::multiply, x, m));
}

// ---------------------------------------------------------------------------------------------------
// Drivers.

TensorId lower_layer(Lowering& l, const LayerSpec& spec, TensorId x) {
  OpGraph& g = l.graph();
  OpGroup group;
  group.name = spec.name;
  group.kind = group_kind(spec);
  group.first_op = g.ops.size();
  TensorId out = -1;
  x = dropout(l, spec.name + ".input_dropout", x, spec.input_dropout);
  switch (spec.kind) {
    case LayerKind::gcn: out = lower_gcn(l, spec, x); break;
    case LayerKind::sage: out = lower_sage(l, spec, x); break;
    case LayerKind::gin: out = lower_gin(l, spec, x); break;
    case LayerKind::gat: out = lower_gat(l, spec, x); break;
    case LayerKind::schnet: out = lower_schnet(l, spec, x); break;
    case LayerKind::rgcn: out = lower_rgcn(l, spec, x); break;
    case LayerKind::linear: out = lower_linear(l, spec, x); break;
    case LayerKind::pool: out = lower_pool(l, spec, x); break;
    case LayerKind::film: out = lower_film(l, spec, x); break;
    case LayerKind::cgconv: out = lower_cgconv(l, spec, x); break;
  }
  if (spec.activation) out = l.op(unary(spec.name + "." + to_string(*spec.activation), g, *spec.activation, out, spec.activation_scalar));
  group.op_count = g.ops.size() - group.first_op;
  if (spec.available_memory_proportion)
    for (std::size_t k = group.first_op; k < g.ops.size(); ++k) g.ops[k].available_memory_proportion = *spec.available_memory_proportion;
  g.groups.push_back(group);
  return out;
}

TensorId lower_model(Lowering& l, const std::vector<LayerSpec>& model, std::int64_t num_features, const std::string& prefix) {
  TensorId x = l.input(prefix + "x", {l.num_nodes(), num_features}, InputFill::Kind::standard_normal);
  for (const LayerSpec& spec : model) x = lower_layer(l, spec, x);
  return x;
}

LayerSpec schnet_block_layer(const std::string& name, std::int64_t num_features) {
  LayerSpec spec;
  spec.kind = LayerKind::schnet;
  spec.name = name;
  spec.out_features = num_features;
  spec.filters = num_features;
  spec.num_gaussians = 50;
  spec.cutoff = 6.0f;
  return spec;
}

void lower_schnet_block(OpGraph& graph, std::vector<InputFill>& fills, const std::string& name, std::int64_t num_nodes,
                        std::int64_t num_features, std::int64_t num_edges, std::uint64_t seed, DType dtype) {
  graphs::EdgeList edges;
  edges.num_nodes = num_nodes;
  // torch.randint(num_inputs, (2, num_outputs)): sources then destinations, uniform with repeats.
  auto engine = streams::named_engine(seed, name + ".edges");
  edges.src = streams::uniform_indices(engine, num_edges, num_nodes);
  edges.dst = streams::uniform_indices(engine, num_edges, num_nodes);
  // Its own seed for the distances, so that two blocks of one workload differ.
  Lowering l(graph, fills, edges, streams::mix64(seed ^ streams::name_hash(name)));
  l.value_dtype = dtype;
  // Tensor names carry the op's name so that several schnet_block ops can share one graph.
  const std::size_t first_tensor = graph.tensors.size();
  const TensorId x = l.input(name + ".x", {num_nodes, num_features}, InputFill::Kind::standard_normal);
  lower_layer(l, schnet_block_layer(name, num_features), x);
  // The benchmark's edges are drawn per run (torch.randint), op inputs like any ops-list op's indices,
  // not a model's fixed graph: no backend may compile them into its program.
  for (std::size_t t = first_tensor; t < graph.tensors.size(); ++t) {
    std::string& n = graph.tensors[t].name;
    if (n.rfind("edges", 0) == 0) {
      n = name + "." + n;
      graph.tensors[t].known_at_compile_time = false;
    }
  }
}

}  // namespace tilesim::workloads::layers
