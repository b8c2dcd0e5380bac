#include "workloads/layers/model_spec.hpp"

#include <limits>
#include <optional>
#include <set>

#include "common/error.hpp"
#include "common/strict_json.hpp"

namespace tilesim::workloads::layers {

namespace {

constexpr std::int64_t max_width = std::numeric_limits<std::int32_t>::max();
// torch.nn.functional.leaky_relu's default slope, for a model's "leaky_relu" activation.
constexpr float torch_leaky_relu_slope = 0.01f;

// A dropout probability in [0, 1) (0 when absent): 1 would drop every value and scale by 1 / 0.
double dropout_probability(ObjectReader& r, const std::string& key) {
  const double p = r.number_or(key, 0.0, 1.0, 0.0);
  if (p >= 1.0) throw InputError(r.file(), r.path_of(key), "a dropout probability in [0, 1)", describe_json(r.value(key)));
  return p;
}

std::int64_t width(ObjectReader& r, const std::string& key) {
  return r.positive_integer(key, max_width, " (widths must fit int32, tilesim's index type)");
}

std::string kinds_text() { return "one of \"gcn\", \"sage\", \"gin\", \"gat\", \"schnet\", \"rgcn\", \"linear\", \"pool\", \"film\", \"cgconv\""; }

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 255) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  return true;
}

LayerSpec read_layer(const nlohmann::json& element, const std::string& file, const std::string& path, std::size_t position,
                     std::int64_t in_features) {
  ObjectReader r(element, file, path);
  LayerSpec spec;
  spec.json_path = path;
  if (!r.has("layer")) throw InputError(file, path + ".layer", kinds_text(), "no \"layer\" key");
  const auto& kind_value = r.value("layer");
  const auto kind = kind_value.is_string() ? layer_kind_from_string(kind_value.get<std::string>()) : std::nullopt;
  if (!kind) throw InputError(file, r.path_of("layer"), kinds_text(), describe_json(kind_value));
  spec.kind = *kind;
  spec.name = r.string_or("name", to_string(spec.kind) + "_" + std::to_string(position));
  if (!valid_name(spec.name))
    throw InputError(file, r.path_of("name"), "a name of 1 to 255 letters, digits, '_' or '-' (it prefixes the layer's op names)",
                     describe_json(spec.name));

  if (spec.kind == LayerKind::pool) {
    // Each graph's rows reduced to one: the width stays, and there is no weight or bias.
    spec.out_features = in_features;
    spec.bias = false;
    if (r.has("reduce")) spec.pool_reduce = r.one_of("reduce", {"add", "mean"}) == "mean" ? PoolReduce::mean : PoolReduce::add;
  } else if (spec.kind == LayerKind::schnet || spec.kind == LayerKind::cgconv) {
    // An InteractionBlock maps hidden -> hidden; CGConv(channels) maps channels -> channels.
    spec.out_features = r.has("out") ? width(r, "out") : in_features;
    if (spec.out_features != in_features)
      throw InputError(file, r.path_of("out"),
                       "the layer's input width " + std::to_string(in_features) +
                           (spec.kind == LayerKind::schnet ? " (a SchNet interaction block keeps its width)"
                                                           : " (CGConv keeps its width: out = x + the aggregated messages)"),
                       std::to_string(spec.out_features));
  } else {
    spec.out_features = width(r, "out");
  }
  if (spec.kind != LayerKind::pool && r.has("bias")) spec.bias = r.boolean("bias");
  if (r.has("activation")) {
    const std::string a = r.one_of("activation", {"none", "relu", "leaky_relu", "shifted_softplus", "sigmoid", "softplus"});
    if (a != "none") spec.activation = *unary_fn_from_string(a);
    if (a == "leaky_relu") spec.activation_scalar = torch_leaky_relu_slope;
  }
  if (r.has("available_memory_proportion"))
    spec.available_memory_proportion = r.number_above("available_memory_proportion", 0.0, 1.0);
  spec.input_dropout = dropout_probability(r, "input_dropout");
  switch (spec.kind) {
    case LayerKind::gat:
      spec.attention_dropout = dropout_probability(r, "attention_dropout");
      spec.heads = r.integer_or("heads", 1, 1024, 1);
      spec.negative_slope = static_cast<float>(r.number_or("negative_slope", 0.0, 1.0, 0.2));
      if (r.has("concat")) spec.concat = r.boolean("concat");
      if (r.has("attention"))
        spec.gat_attention = r.one_of("attention", {"per_node", "per_edge"}) == "per_edge" ? GatAttention::per_edge : GatAttention::per_node;
      if (spec.heads * spec.out_features > max_width)
        throw InputError(file, r.path_of("heads"), "heads * out at most " + std::to_string(max_width),
                         std::to_string(spec.heads * spec.out_features));
      break;
    case LayerKind::gin:
      if (r.has("nn")) spec.gin_nn = r.one_of("nn", {"mlp", "linear"}) == "linear" ? GinNn::linear : GinNn::mlp;
      // One Linear has no hidden width: a "hidden" would be silently unused.
      if (spec.gin_nn == GinNn::linear && r.has("hidden"))
        throw InputError(file, r.path_of("hidden"), "no \"hidden\" for \"nn\": \"linear\" (one Linear(in, out) has no hidden width)",
                         describe_json(r.value("hidden")));
      spec.hidden_features = r.has("hidden") ? width(r, "hidden") : spec.out_features;
      spec.eps = static_cast<float>(r.number_or("eps", -1e6, 1e6, 0.0));
      break;
    case LayerKind::schnet:
      spec.filters = r.has("filters") ? width(r, "filters") : spec.out_features;
      spec.num_gaussians = r.integer_or("num_gaussians", 1, 4096, 50);
      // cutoff > 1: distances are drawn uniform in [1, cutoff), in float32.
      spec.cutoff = static_cast<float>(r.has("cutoff") ? r.number_above("cutoff", 1.0, 1e6) : 10.0);
      if (!(spec.cutoff > 1.0f))
        throw InputError(file, r.path_of("cutoff"), "a number greater than 1 also as a float32 (at least 1.0000001)",
                         describe_json(r.value("cutoff")));
      break;
    case LayerKind::rgcn: spec.num_relations = static_cast<std::int32_t>(r.integer_or("num_relations", 1, 1 << 20, 0)); break;
    case LayerKind::film:
    case LayerKind::cgconv:
      if (r.has("aggr")) {
        const std::string a = r.one_of("aggr", {"mean", "add", "max"});
        spec.aggregation = a == "add" ? MessageAggregation::add : a == "max" ? MessageAggregation::max : MessageAggregation::mean;
      }
      break;
    case LayerKind::gcn:
    case LayerKind::sage:
    case LayerKind::linear:
    case LayerKind::pool: break;
  }
  r.finish();
  return spec;
}

}  // namespace

std::int64_t output_width(const LayerSpec& spec, std::int64_t in_features) {
  if (spec.kind == LayerKind::gat) return spec.concat ? spec.heads * spec.out_features : spec.out_features;
  if (spec.kind == LayerKind::schnet) return in_features;
  return spec.out_features;
}

std::vector<LayerSpec> parse_model(const nlohmann::json& array, const std::string& file, const std::string& json_path,
                                   std::int64_t in_features) {
  if (!array.is_array() || array.empty())
    throw InputError(file, json_path, "a non-empty array of layers ({\"layer\": \"gcn\", \"out\": 16, ...})", describe_json(array));
  std::vector<LayerSpec> model;
  std::set<std::string> names;
  std::optional<std::string> pooled_at;  // the pool layer's JSON path, once one is read
  std::int64_t in = in_features;
  for (std::size_t i = 0; i < array.size(); ++i) {
    const std::string path = json_path + "[" + std::to_string(i) + "]";
    LayerSpec spec = read_layer(array[i], file, path, i, in);
    // After a pool the rows are graphs, which have no edges: only linear layers (a readout MLP) follow.
    if (pooled_at && spec.kind != LayerKind::linear)
      throw InputError(file, path + ".layer",
                       "\"linear\" after the \"pool\" layer " + *pooled_at + " (its rows are graphs, with no edges to pass messages over)",
                       describe_json(to_string(spec.kind)));
    if (spec.kind == LayerKind::pool) pooled_at = path;
    if (!names.insert(spec.name).second)
      throw InputError(file, path + ".name", "a layer name not used by another layer", describe_json(spec.name));
    in = output_width(spec, in);
    model.push_back(std::move(spec));
  }
  return model;
}

nlohmann::json to_json(const LayerSpec& spec, std::int64_t in_features) {
  (void)in_features;
  nlohmann::json j = {{"layer", to_string(spec.kind)},
                      {"name", spec.name},
                      {"activation", spec.activation ? to_string(*spec.activation) : "none"}};
  // A pool keeps its input's width and has no bias: it takes neither key.
  if (spec.kind != LayerKind::pool) {
    j["out"] = spec.out_features;
    j["bias"] = spec.bias;
  }
  if (spec.available_memory_proportion) j["available_memory_proportion"] = *spec.available_memory_proportion;
  if (spec.input_dropout > 0) j["input_dropout"] = spec.input_dropout;
  switch (spec.kind) {
    case LayerKind::gat:
      if (spec.attention_dropout > 0) j["attention_dropout"] = spec.attention_dropout;
      j["heads"] = spec.heads;
      j["negative_slope"] = spec.negative_slope;
      j["attention"] = spec.gat_attention == GatAttention::per_edge ? "per_edge" : "per_node";
      j["concat"] = spec.concat;
      break;
    case LayerKind::gin:
      j["nn"] = spec.gin_nn == GinNn::linear ? "linear" : "mlp";
      if (spec.gin_nn == GinNn::mlp) j["hidden"] = spec.hidden_features;
      j["eps"] = spec.eps;
      break;
    case LayerKind::schnet:
      j["filters"] = spec.filters;
      j["num_gaussians"] = spec.num_gaussians;
      j["cutoff"] = spec.cutoff;
      break;
    // 0: the graph's count, known once the graph is built. Echoed as 0 it made an echo that is not a
    // valid workload (found by fuzzing the workload reader's echo), so it is left out.
    case LayerKind::rgcn:
      if (spec.num_relations > 0) j["num_relations"] = spec.num_relations;
      break;
    case LayerKind::pool: j["reduce"] = spec.pool_reduce == PoolReduce::mean ? "mean" : "add"; break;
    case LayerKind::film:
    case LayerKind::cgconv: {
      const MessageAggregation a = message_aggregation(spec);
      j["aggr"] = a == MessageAggregation::add ? "add" : a == MessageAggregation::max ? "max" : "mean";
      break;
    }
    case LayerKind::gcn:
    case LayerKind::sage:
    case LayerKind::linear: break;
  }
  return j;
}

}  // namespace tilesim::workloads::layers
