#include "workloads/workload.hpp"

#include <cstdio>
#include <filesystem>
#include <iterator>
#include <limits>
#include <map>
#include <stdexcept>

#include "common/error.hpp"
#include "common/host_info.hpp"
#include "common/integer_math.hpp"
#include "common/limits.hpp"
#include "common/strict_json.hpp"
#include "workloads/layers/model_spec.hpp"

namespace tilesim::workloads {

namespace {

// Indices are int32 on every backend (PopTorch lowers torch's int64 to int32), so a size that an
// index ranges over must fit; the others share the bound so that rows and counts fit int32 too.
constexpr std::int64_t max_size = limits::max_size;

// Value dtypes a user may reasonably write that tilesim knows of but does not implement yet; they get
// a "not implemented" message rather than "unknown".
const char* const planned_dtypes[] = {"float64", "int8", "int16", "int32", "int64", "uint8", "bool"};
const char* const value_dtypes_text = "\"float32\", \"float16\" or \"bfloat16\"";

bool is_name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

// Names become folder and file names (out/<name>/), so they are restricted to a portable set.
void check_name(const std::string& name, const std::string& file, const std::string& path) {
  bool ok = !name.empty() && name.size() <= 255 && name != "." && name != "..";
  for (char c : name) ok = ok && is_name_char(c);
  if (!ok) {
    throw InputError(file, path,
                     "a name of 1 to 255 letters, digits, '.', '_' or '-' (not \".\" or \"..\"; it names output files)",
                     describe_json(name));
  }
}

std::int64_t read_size(ObjectReader& reader, const std::string& key) {
  return reader.positive_integer(key, max_size, " (sizes must fit int32, tilesim's index type)");
}

DType read_dtype(ObjectReader& reader) {
  if (!reader.has("dtype")) {
    reader.ignore("dtype");
    return DType::float32;
  }
  const auto& v = reader.value("dtype");
  if (v.is_string()) {
    const auto name = v.get<std::string>();
    if (auto dtype = dtype_from_string(name)) return *dtype;
    for (const char* planned : planned_dtypes) {
      if (name == planned) {
        throw InputError(reader.file(), reader.path_of("dtype"),
                         std::string(value_dtypes_text) + " (the value dtypes implemented so far; " + name + " is not implemented yet)",
                         describe_json(v));
      }
    }
  }
  throw InputError(reader.file(), reader.path_of("dtype"), std::string(value_dtypes_text) + " (a value dtype)", describe_json(v));
}

std::string resolve_index_path(const std::string& given, const std::string& workload_file) {
  namespace fs = std::filesystem;
  const fs::path p(given);
  if (p.is_absolute() || workload_file.empty()) return p.lexically_normal().string();
  return (fs::path(workload_file).parent_path() / p).lexically_normal().string();
}

IndexSpec read_indices(ObjectReader& op_reader) {
  const std::string path = op_reader.path_of("indices");
  IndexSpec spec;
  if (!op_reader.has("indices")) {
    op_reader.ignore("indices");
    return spec;
  }
  const auto& v = op_reader.value("indices");
  const std::string forms = "\"uniform\", \"sorted\", {\"distribution\": \"uniform\" or \"sorted\"} or {\"file\": PATH}";
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "uniform") return spec;
    if (s == "sorted") {
      spec.distribution = IndexDistribution::sorted;
      return spec;
    }
    throw InputError(op_reader.file(), path, forms, describe_json(v));
  }
  if (!v.is_object()) throw InputError(op_reader.file(), path, forms, describe_json(v));

  ObjectReader reader(v, op_reader.file(), path);
  if (reader.has("distribution") && reader.has("file")) {
    throw InputError(reader.file(), path, "either \"distribution\" or \"file\"", "both");
  }
  if (reader.has("distribution")) {
    spec.distribution = reader.one_of("distribution", {"uniform", "sorted"}) == "sorted" ? IndexDistribution::sorted
                                                                                        : IndexDistribution::uniform;
  } else if (reader.has("file")) {
    spec.distribution = IndexDistribution::file;
    spec.given_file = reader.string("file");
    spec.file = resolve_index_path(spec.given_file, reader.file());
  }
  // Both keys are allowed; marking them lets finish() list them when it reports a misspelt one.
  reader.ignore("distribution");
  reader.ignore("file");
  reader.finish();
  if (!reader.has("distribution") && !reader.has("file")) throw InputError(reader.file(), path, forms, describe_json(v));
  return spec;
}

struct OpBytes {
  std::int64_t input = 0, indices = 0, output = 0;
  std::int64_t total() const { return saturating_add(saturating_add(input, indices), output); }
};

OpBytes op_bytes(const OpSpec& op) {
  const std::int64_t value_bytes = dtype_bytes(op.dtype);
  if (op.schnet_block) {
    // Its largest tensors: per edge the Gaussians (50), six filter-wide intermediates and two indices;
    // per node six hidden-wide tensors (workloads.md section 3, SchNet).
    const std::int64_t n = op.shape.num_inputs, f = op.shape.num_features, e = op.shape.num_outputs;
    OpBytes b;
    b.input = saturating_mul(saturating_mul(n, f), value_bytes);
    b.indices = saturating_mul(saturating_mul(e, 2), dtype_bytes(DType::int32));
    b.output = saturating_add(saturating_mul(saturating_mul(e, saturating_add(50, saturating_mul(6, f))), value_bytes),
                              saturating_mul(saturating_mul(saturating_mul(n, f), 5), value_bytes));
    return b;
  }
  const std::int64_t num_indices = op.kind == OpKind::gather ? op.shape.num_outputs : op.shape.num_inputs;
  OpBytes b;
  b.input = saturating_mul(saturating_mul(op.shape.num_inputs, op.shape.num_features), value_bytes);
  b.indices = saturating_mul(num_indices, dtype_bytes(DType::int32));
  b.output = saturating_mul(saturating_mul(op.shape.num_outputs, op.shape.num_features), value_bytes);
  return b;
}

// Half of physical memory (host_input_memory_bytes): instantiate holds every op's inputs. Unknown memory
// leaves only the overflow bound.
std::int64_t memory_limit_bytes() {
  const std::int64_t bytes = host_input_memory_bytes();
  return bytes > 0 ? bytes : std::numeric_limits<std::int64_t>::max() - 1;
}

std::string bytes_text(std::int64_t bytes) {
  if (bytes == std::numeric_limits<std::int64_t>::max()) return "more than 2^63 bytes";
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double scaled = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  while (scaled >= 1024.0 && unit + 1 < std::size(units)) {
    scaled /= 1024.0;
    ++unit;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, " bytes (%.1f %s)", scaled, units[unit]);
  return std::to_string(bytes) + buf;
}

OpSpec read_op(const nlohmann::json& element, const std::string& file, const std::string& path, std::size_t position) {
  ObjectReader reader(element, file, path);
  OpSpec op;
  const std::string kind = reader.one_of("op", {"gather", "scatter_add", "schnet_block"});
  op.schnet_block = kind == "schnet_block";
  op.kind = kind == "gather" ? OpKind::gather : OpKind::scatter_add;
  op.name = reader.string_or("name", kind + "_" + std::to_string(position));
  if (reader.has("name")) check_name(op.name, file, reader.path_of("name"));
  op.shape.num_inputs = read_size(reader, "num_inputs");
  op.shape.num_features = read_size(reader, "num_features");
  op.shape.num_outputs = read_size(reader, "num_outputs");
  op.dtype = read_dtype(reader);
  // A schnet_block's edges are uniform by definition (the hydronet harness): no "indices" key.
  if (!op.schnet_block) op.indices = read_indices(reader);
  if (reader.has("available_memory_proportion"))
    op.available_memory_proportion = reader.number_above("available_memory_proportion", 0.0, 1.0);
  reader.finish();
  return op;
}

// What a file that has model keys but no "model" is told: which of its keys need a model.
std::string missing_model_expectation(const ObjectReader& root) {
  std::string present;
  for (const char* key : {"graph", "num_features", "loader"}) {
    if (!root.has(key)) continue;
    present += (present.empty() ? "\"" : ", \"") + std::string(key) + "\"";
  }
  const bool one = present.find(',') == std::string::npos;
  return "a \"model\" array of layers (" + present + (one ? " belongs" : " belong") + " with a model; add one or remove " +
         (one ? "it" : "them") + ")";
}

// "graph", "num_features" and "model" at the top level: all three belong together (num_features may
// come from a dataset preset instead).
ModelSpec read_model(ObjectReader& root) {
  const std::string& file = root.file();
  ModelSpec m;
  if (root.has("loader")) m.loader = loaders::parse_loader(root.value("loader"), file, "loader");
  const bool dataset = m.loader && m.loader->kind == loaders::LoaderSpec::Kind::graphs;
  // The model is checked first: a file with "num_features" (or a graph) but no model is missing the
  // model, and asking it for a graph "for the model" would point the wrong way.
  if (!root.has("model")) throw InputError(file, "model", missing_model_expectation(root), "none");
  if (!dataset && !root.has("graph")) throw InputError(file, "graph", "a \"graph\" object for the \"model\" to run on", "none");
  if (dataset) {
    // The loader's dataset is the graph source.
    if (root.has("graph"))
      throw InputError(file, "graph", "no \"graph\" beside a \"graphs\" loader (its \"dataset\" is the graph source)",
                       describe_json(root.value("graph")));
  } else {
    const auto& graph = root.value("graph");
    if (!graph.is_object()) throw InputError(file, "graph", "an object", describe_json(graph));
    m.graph = graphs::parse_graph_spec(graph, file, "graph");
  }
  const std::int64_t given_features = dataset ? loaders::dataset_num_features(m.loader->dataset->kind) : m.graph.num_features;
  if (root.has("num_features")) {
    m.num_features = read_size(root, "num_features");
  } else if (given_features > 0) {
    m.num_features = given_features;
  } else {
    throw InputError(file, "num_features", std::string("the node feature width (the ") + (dataset ? "dataset" : "graph source") + " gives none)",
                     "no \"num_features\"");
  }
  m.layers = layers::parse_model(root.value("model"), file, "model", m.num_features);
  m.dtype = read_dtype(root);
  if (root.has("train")) m.train = training::parse_train(root.value("train"), file, "train");
  if (m.train) {
    // Loss scaling guards half gradients; a float32 model has none (its step is the plain float32 one).
    if (m.dtype == DType::float32 && m.train->loss_scale && *m.train->loss_scale != 1)
      throw InputError(file, "train.loss_scale",
                       "1 or no \"loss_scale\" for a float32 model (loss scaling keeps a half model's gradients in range; "
                       "give the model a \"dtype\" of \"float16\" or \"bfloat16\" to train it in half precision)",
                       describe_json(root.value("train")["loss_scale"]));
    if (!m.train->loss_scale) m.train->loss_scale = training::default_loss_scale(m.dtype);
    // A model that pools its own rows (a "pool" layer, then a readout MLP) hands the loss graph rows.
    for (std::size_t i = 0; i < m.layers.size(); ++i) {
      if (m.layers[i].kind != layers::LayerKind::pool) continue;
      const std::string at = "model[" + std::to_string(i) + "]";
      if (m.train->task != training::TrainSpec::Task::graph)
        throw InputError(file, "train.task", "\"graph\" for a model with a \"pool\" layer (" + at + ": its rows are graphs)",
                         describe_json(root.value("train")["task"]));
      if (m.train->pool_given)
        throw InputError(file, "train.pool", "no \"pool\" beside a model that pools its rows itself (the \"pool\" layer " + at + ")",
                         describe_json(root.value("train")["pool"]));
      m.train->model_pools = true;
    }
  }
  if (m.loader && m.train) {
    // Each batch is one step: the loader decides how many.
    if (root.value("train").contains("steps"))
      throw InputError(file, "train.steps", "no \"steps\" beside a \"loader\" (one step per batch: \"loader.batches\" or --batches)",
                       describe_json(root.value("train")["steps"]));
    const bool graph_task = m.train->task == training::TrainSpec::Task::graph;
    if (graph_task != dataset)
      throw InputError(file, "train.task",
                       dataset ? "\"graph\" for a \"graphs\" loader (its batches are graphs to classify or regress)"
                               : "\"node\" for a \"" + loaders::to_string(m.loader->kind) + "\" loader (its batches are nodes of one graph)",
                       describe_json(training::to_string(m.train->task)));
  }
  return m;
}

}  // namespace

std::string to_string(IndexDistribution d) {
  switch (d) {
    case IndexDistribution::uniform: return "uniform";
    case IndexDistribution::sorted: return "sorted";
    case IndexDistribution::file: return "file";
  }
  throw std::logic_error("to_string: unknown index distribution");
}

Workload parse_workload(const nlohmann::json& document, const std::string& file) {
  ObjectReader root(document, file, "");
  Workload w;
  w.source_file = file;
  w.name = root.string("name");
  check_name(w.name, file, root.path_of("name"));
  w.seed = static_cast<std::uint64_t>(root.integer_or("seed", 0, limits::max_seed, 0));
  if (!root.has("ops") && !root.has("model") && !root.has("graph") && !root.has("num_features"))
    throw InputError(file, "ops", "an \"ops\" array, a \"graph\" with a \"model\", or both", "neither");
  static const nlohmann::json no_ops = nlohmann::json::array();
  const auto& ops = root.has("ops") ? root.array("ops") : no_ops;
  if (root.has("train") && !root.has("model"))
    throw InputError(file, "train", "a \"train\" section beside a \"model\" (it trains the model)", "no \"model\"");
  if (root.has("dtype") && !root.has("model"))
    throw InputError(file, "dtype", "a \"dtype\" beside a \"model\" (the model's value type; an op takes its own \"dtype\")",
                     "no \"model\"");
  if (root.has("loader") && !root.has("model"))
    throw InputError(file, "loader", "a \"loader\" section beside a \"model\" (it feeds the model batches)", "no \"model\"");
  if (root.has("loader") && root.has("ops"))
    throw InputError(file, "ops", "no \"ops\" beside a \"loader\" (a mini-batch workload runs its model only)",
                     describe_json(root.value("ops")));
  if (root.has("parallel") && !root.has("model"))
    throw InputError(file, "parallel", "a \"parallel\" section beside a \"model\" (it spreads the model's step over devices)",
                     "no \"model\"");
  if (root.has("parallel") && root.has("ops"))
    throw InputError(file, "ops", "no \"ops\" beside a \"parallel\" section (it spreads the model's step; ops run on one device)",
                     describe_json(root.value("ops")));
  if (root.has("model") || root.has("graph") || root.has("num_features") || root.has("loader")) w.model = read_model(root);
  if (root.has("parallel")) {
    parallel::ModelFacts facts;
    for (const auto& layer : w.model->layers) facts.layer_names.push_back(layer.name);
    facts.training = w.model->train.has_value();
    if (w.model->loader) facts.loader_kind = loaders::to_string(w.model->loader->kind);
    w.parallel = parallel::parse_parallel(root.value("parallel"), file, "parallel", facts);
  }
  // Known keys, so that a misspelt one is reported with them listed.
  for (const char* key : {"ops", "graph", "num_features", "model", "train", "loader", "dtype", "parallel"}) root.ignore(key);
  root.finish();

  const std::int64_t limit = memory_limit_bytes();
  std::int64_t all_bytes = 0;
  std::map<std::string, std::size_t> position_of_name;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::string path = root.element_path("ops", i);
    OpSpec op = read_op(ops[i], file, path, i);

    auto [it, inserted] = position_of_name.emplace(op.name, i);
    if (!inserted) {
      const bool named = ops[i].contains("name");
      throw InputError(file, named ? path + ".name" : path, "an op name not used by another op",
                       std::string(named ? "" : "the default name ") + describe_json(op.name) + ", already the name of " +
                           root.element_path("ops", it->second));
    }

    const OpBytes bytes = op_bytes(op);
    if (bytes.total() > limit) {
      throw InputError(file, path,
                       "tensors (input + indices + output) of at most " + bytes_text(limit) +
                           ", half of this host's physical memory",
                       bytes_text(bytes.total()) + " needed: input " + bytes_text(bytes.input) + ", indices " +
                           bytes_text(bytes.indices) + ", output " + bytes_text(bytes.output));
    }
    all_bytes = saturating_add(all_bytes, bytes.total());
    if (all_bytes > limit) {
      throw InputError(file, path,
                       "the tensors of all ops together to need at most " + bytes_text(limit) +
                           ", half of this host's physical memory",
                       bytes_text(all_bytes) + " needed by ops[0] to " + path);
    }

    // Checked now so that a bad index file is reported before any backend starts.
    if (!op.schnet_block && op.indices.distribution == IndexDistribution::file) {
      const std::int64_t count = op.kind == OpKind::gather ? op.shape.num_outputs : op.shape.num_inputs;
      const std::int64_t range = op.kind == OpKind::gather ? op.shape.num_inputs : op.shape.num_outputs;
      read_index_file(op.indices.file, count, range, file, path + ".indices.file");
    }
    w.ops.push_back(std::move(op));
  }
  if (w.model) {
    // Layer names prefix their ops' names ("gcn_0.lin"); an op named like a layer would be confusing.
    for (const auto& layer : w.model->layers)
      if (position_of_name.count(layer.name))
        throw InputError(file, "model", "layer names not used by an op", describe_json(layer.name) + ", also an op's name");
  }
  return w;
}

Workload load_workload(const std::string& path) { return parse_workload(load_json_file(path), path); }

nlohmann::json to_json(const Workload& workload) {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& op : workload.ops) {
    if (op.schnet_block) {
      ops.push_back({{"op", "schnet_block"},
                     {"name", op.name},
                     {"num_inputs", op.shape.num_inputs},
                     {"num_features", op.shape.num_features},
                     {"num_outputs", op.shape.num_outputs},
                     {"dtype", to_string(op.dtype)}});
      if (op.available_memory_proportion) ops.back()["available_memory_proportion"] = *op.available_memory_proportion;
      continue;
    }
    nlohmann::json indices = {{"distribution", to_string(op.indices.distribution)}};
    if (op.indices.distribution == IndexDistribution::file) {
      // An IndexSpec built in code may carry only the resolved path.
      indices["file"] = op.indices.given_file.empty() ? op.indices.file : op.indices.given_file;
      indices["resolved_file"] = op.indices.file;
    }
    ops.push_back({{"op", to_string(op.kind)},
                   {"name", op.name},
                   {"num_inputs", op.shape.num_inputs},
                   {"num_features", op.shape.num_features},
                   {"num_outputs", op.shape.num_outputs},
                   {"dtype", to_string(op.dtype)},
                   {"indices", indices}});
    if (op.available_memory_proportion) ops.back()["available_memory_proportion"] = *op.available_memory_proportion;
  }
  nlohmann::json echo = {{"name", workload.name}, {"seed", workload.seed}, {"source_file", workload.source_file}};
  // A model-only workload has no "ops" (an empty array is not valid input), so its echo stays a workload.
  if (!workload.ops.empty() || !workload.model) echo["ops"] = ops;
  if (workload.model) {
    if (!workload.model->loader || workload.model->loader->kind != loaders::LoaderSpec::Kind::graphs)
      echo["graph"] = graphs::to_json(workload.model->graph);
    echo["num_features"] = workload.model->num_features;
    echo["dtype"] = to_string(workload.model->dtype);
    nlohmann::json model = nlohmann::json::array();
    std::int64_t in = workload.model->num_features;
    for (const auto& layer : workload.model->layers) {
      model.push_back(layers::to_json(layer, in));
      in = layers::output_width(layer, in);
    }
    echo["model"] = model;
    if (workload.model->train) {
      echo["train"] = training::to_json(*workload.model->train);
      if (workload.model->loader) echo["train"].erase("steps");  // one per batch
    }
    if (workload.model->loader) echo["loader"] = loaders::to_json(*workload.model->loader);
  }
  if (workload.parallel) echo["parallel"] = parallel::to_json(*workload.parallel);
  return echo;
}

}  // namespace tilesim::workloads
