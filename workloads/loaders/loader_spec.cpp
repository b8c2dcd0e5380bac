#include "workloads/loaders/loader_spec.hpp"

#include <limits>
#include <stdexcept>

#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/strict_json.hpp"

namespace tilesim::workloads::loaders {

namespace {

// Sizes are int32 on every backend (tilesim's index type).
constexpr std::int64_t max_size = limits::max_size;

// A uniform dataset's graphs: as many nodes as graph_dataset.cpp allows one graph.
constexpr std::int64_t max_dataset_graph_nodes = 1000;

// PyG's QM9 (torch_geometric/datasets/qm9.py): 130,831 molecules with 11 node features each.
constexpr std::int64_t qm9_num_graphs = 130831;
constexpr std::int64_t qm9_num_features = 11;

std::int64_t size_at(ObjectReader& r, const std::string& key, std::int64_t min = 1) {
  return r.integer(key, min, max_size);
}

FixedSize read_fixed_size(ObjectReader& r, bool graphs) {
  FixedSize s;
  s.num_nodes = size_at(r, "num_nodes");
  s.num_edges = size_at(r, "num_edges", 0);
  if (graphs) {
    // One graph of the fixed size holds the padding (PopTorch Geometric's padding graph).
    s.num_graphs = size_at(r, "num_graphs", 2);
  } else if (r.has_refused("num_graphs")) {
    throw InputError(r.file(), r.path_of("num_graphs"), "no \"num_graphs\" for a node loader (its batches are one graph)",
                     describe_json(r.value("num_graphs")));
  }
  r.finish();
  return s;
}

// A dataset's key that only another kind takes is an error naming the kind that does.
void refuse_other_kinds(ObjectReader& r, DatasetKind kind) {
  const std::pair<const char*, DatasetKind> owned[] = {{"min_waters", DatasetKind::water}, {"max_waters", DatasetKind::water},
                                                       {"min_nodes", DatasetKind::uniform}, {"max_nodes", DatasetKind::uniform}};
  for (const auto& [key, owner] : owned)
    if (owner != kind && r.has_refused(key))
      throw InputError(r.file(), r.path_of(key),
                       "no \"" + std::string(key) + "\" for a \"" + to_string(kind) + "\" dataset (\"" + to_string(owner) + "\" only)",
                       describe_json(r.value(key)));
}

void read_uniform_sizes(ObjectReader& r, DatasetSpec& d) {
  for (const char* key : {"num_graphs", "min_nodes", "max_nodes"})
    if (!r.has(key)) throw InputError(r.file(), r.path_of(key), "\"" + std::string(key) + "\" for a \"uniform\" dataset", "none");
  d.num_graphs = size_at(r, "num_graphs");
  d.min_nodes = r.integer("min_nodes", 1, max_dataset_graph_nodes);
  d.max_nodes = r.integer("max_nodes", 1, max_dataset_graph_nodes);
  if (d.max_nodes < d.min_nodes)
    throw InputError(r.file(), r.path_of("max_nodes"), "at least min_nodes (" + std::to_string(d.min_nodes) + ")",
                     std::to_string(d.max_nodes));
}

DatasetSpec read_dataset(ObjectReader& r) {
  DatasetSpec d;
  const std::string kind = r.one_of("kind", {"qm9", "water", "uniform"});
  d.kind = kind == "qm9" ? DatasetKind::qm9 : kind == "water" ? DatasetKind::water : DatasetKind::uniform;
  refuse_other_kinds(r, d.kind);
  if (d.kind == DatasetKind::qm9) {
    d.num_graphs = r.has("num_graphs") ? size_at(r, "num_graphs") : qm9_num_graphs;
  } else if (d.kind == DatasetKind::uniform) {
    read_uniform_sizes(r, d);
  } else {
    if (!r.has("num_graphs"))
      throw InputError(r.file(), r.path_of("num_graphs"), "the number of water clusters in the dataset (\"num_graphs\")", "none");
    d.num_graphs = size_at(r, "num_graphs");
    d.min_waters = r.has("min_waters") ? size_at(r, "min_waters") : d.min_waters;
    d.max_waters = r.has("max_waters") ? size_at(r, "max_waters") : d.max_waters;
    if (d.max_waters < d.min_waters)
      throw InputError(r.file(), r.path_of("max_waters"), "at least min_waters (" + std::to_string(d.min_waters) + ")",
                       std::to_string(d.max_waters));
    if (3 * d.max_waters > max_size)
      throw InputError(r.file(), r.path_of("max_waters"), "at most " + std::to_string(max_size / 3) + " waters",
                       std::to_string(d.max_waters));
  }
  const std::string connectivity = r.has("connectivity") ? r.one_of("connectivity", {"complete", "knn"}) : "complete";
  d.knn = connectivity == "knn";
  if (d.knn) {
    if (!r.has("k")) throw InputError(r.file(), r.path_of("k"), "k, the neighbours per atom of a \"knn\" dataset", "none");
    d.k = size_at(r, "k");
  } else if (r.has_refused("k")) {
    throw InputError(r.file(), r.path_of("k"), "no \"k\" for complete graphs (\"connectivity\": \"knn\" uses it)",
                     describe_json(r.value("k")));
  }
  for (const char* key : {"connectivity", "min_waters", "max_waters", "min_nodes", "max_nodes", "k"}) r.ignore(key);
  r.finish();
  return d;
}

void refuse(ObjectReader& r, const std::string& key, const std::string& kind) {
  if (r.has_refused(key))
    throw InputError(r.file(), r.path_of(key), "no \"" + key + "\" for a \"" + kind + "\" loader", describe_json(r.value(key)));
}

}  // namespace

std::string to_string(LoaderSpec::Kind kind) {
  switch (kind) {
    case LoaderSpec::Kind::neighbor: return "neighbor";
    case LoaderSpec::Kind::cluster: return "cluster";
    case LoaderSpec::Kind::graphs: return "graphs";
  }
  throw std::logic_error("to_string: unknown loader kind");
}

std::string to_string(LoaderSpec::Packing packing) {
  switch (packing) {
    case LoaderSpec::Packing::pad: return "pad";
    case LoaderSpec::Packing::lpfhp: return "lpfhp";
    case LoaderSpec::Packing::stream: return "stream";
  }
  throw std::logic_error("to_string: unknown packing");
}

std::string to_string(DatasetKind kind) {
  switch (kind) {
    case DatasetKind::qm9: return "qm9";
    case DatasetKind::water: return "water";
    case DatasetKind::uniform: return "uniform";
  }
  throw std::logic_error("to_string: unknown dataset kind");
}

std::int64_t dataset_num_features(DatasetKind kind) { return kind == DatasetKind::qm9 ? qm9_num_features : 0; }

LoaderSpec parse_loader(const nlohmann::json& object, const std::string& file, const std::string& json_path) {
  if (!object.is_object()) throw InputError(file, json_path, "an object (the mini-batch loader)", describe_json(object));
  ObjectReader r(object, file, json_path);
  LoaderSpec s;
  const std::string kind = r.one_of("kind", {"neighbor", "cluster", "graphs"});
  s.kind = kind == "neighbor" ? LoaderSpec::Kind::neighbor : kind == "cluster" ? LoaderSpec::Kind::cluster : LoaderSpec::Kind::graphs;
  if (r.has("shuffle")) s.shuffle = r.boolean("shuffle");
  if (r.has("batches")) s.batches = r.integer("batches", 1, limits::max_steps);
  if (r.has("device_iterations")) s.device_iterations = r.integer("device_iterations", 1, limits::max_steps);
  if (r.has("synthetic_data")) s.synthetic_data = r.boolean("synthetic_data");
  if (r.has("asynchronous")) s.asynchronous = r.boolean("asynchronous");

  if (s.kind == LoaderSpec::Kind::neighbor) {
    for (const char* key : {"num_parts", "clusters_per_batch", "dataset", "packing"}) refuse(r, key, kind);
    s.batch_size = size_at(r, "batch_size");
    const nlohmann::json& fanouts = r.array("fanouts");
    const std::string expected = "a non-empty array of fanouts, each a positive integer or -1 (every in-edge)";
    if (fanouts.empty()) throw InputError(file, r.path_of("fanouts"), expected, "[]");
    for (std::size_t i = 0; i < fanouts.size(); ++i) {
      const nlohmann::json& f = fanouts[i];
      const std::string path = r.element_path("fanouts", i);
      // An unsigned value above INT64_MAX would wrap (18446744073709551615 read as -1, every in-edge).
      if (!f.is_number_integer() || (f.is_number_unsigned() && f.get<std::uint64_t>() > static_cast<std::uint64_t>(max_size)))
        throw InputError(file, path, expected, describe_json(f));
      const std::int64_t v = f.get<std::int64_t>();
      if (v == 0 || v < -1 || v > max_size) throw InputError(file, path, expected, describe_json(f));
      s.fanouts.push_back(v);
    }
    if (r.has("replace")) s.replace = r.boolean("replace");
  } else if (s.kind == LoaderSpec::Kind::cluster) {
    for (const char* key : {"batch_size", "fanouts", "replace", "dataset", "packing"}) refuse(r, key, kind);
    s.num_parts = static_cast<std::int32_t>(r.integer("num_parts", 1, max_size));
    s.clusters_per_batch = r.has("clusters_per_batch") ? r.integer("clusters_per_batch", 1, s.num_parts) : 1;
  } else {
    for (const char* key : {"fanouts", "replace", "num_parts", "clusters_per_batch"}) refuse(r, key, kind);
    if (!r.has("dataset"))
      throw InputError(file, r.path_of("dataset"), "a \"dataset\" of small graphs ({\"kind\": \"qm9\" or \"water\", ...})", "none");
    ObjectReader d = r.object("dataset");
    s.dataset = read_dataset(d);
    const std::string packing = r.has("packing") ? r.one_of("packing", {"pad", "lpfhp", "stream"}) : "pad";
    s.packing = packing == "pad" ? LoaderSpec::Packing::pad : packing == "lpfhp" ? LoaderSpec::Packing::lpfhp : LoaderSpec::Packing::stream;
    if (s.packing == LoaderSpec::Packing::pad) {
      s.batch_size = size_at(r, "batch_size");
    } else {
      if (r.has_refused("batch_size"))
        throw InputError(file, r.path_of("batch_size"),
                         "no \"batch_size\" with packing \"" + packing + "\" (the packer fills each batch up to \"fixed_size\")",
                         describe_json(r.value("batch_size")));
      if (!r.has("fixed_size"))
        throw InputError(file, r.path_of("fixed_size"),
                         "a \"fixed_size\" ({\"num_nodes\", \"num_edges\", \"num_graphs\"}) for packing \"" + packing + "\" to fill",
                         "none");
    }
  }
  if (r.has("fixed_size")) {
    ObjectReader f = r.object("fixed_size");
    s.fixed_size = read_fixed_size(f, s.kind == LoaderSpec::Kind::graphs);
    if (s.kind == LoaderSpec::Kind::graphs && s.packing == LoaderSpec::Packing::pad && s.batch_size + 1 > s.fixed_size->num_graphs)
      throw InputError(file, r.path_of("fixed_size") + ".num_graphs",
                       "at least batch_size + 1 = " + std::to_string(s.batch_size + 1) + " (the batch's graphs and the padding graph)",
                       std::to_string(s.fixed_size->num_graphs));
  }
  for (const char* key : {"shuffle", "batches", "replace", "fixed_size", "packing", "clusters_per_batch"}) r.ignore(key);
  r.finish();
  return s;
}

nlohmann::json to_json(const LoaderSpec& s) {
  nlohmann::json j;
  j["kind"] = to_string(s.kind);
  switch (s.kind) {
    case LoaderSpec::Kind::neighbor:
      j["batch_size"] = s.batch_size;
      j["fanouts"] = s.fanouts;
      j["replace"] = s.replace;
      break;
    case LoaderSpec::Kind::cluster:
      j["num_parts"] = s.num_parts;
      j["clusters_per_batch"] = s.clusters_per_batch;
      break;
    case LoaderSpec::Kind::graphs: {
      const DatasetSpec& d = *s.dataset;
      nlohmann::json dj{{"kind", to_string(d.kind)}, {"num_graphs", d.num_graphs}, {"connectivity", d.knn ? "knn" : "complete"}};
      if (d.knn) dj["k"] = d.k;
      if (d.kind == DatasetKind::water) {
        dj["min_waters"] = d.min_waters;
        dj["max_waters"] = d.max_waters;
      }
      if (d.kind == DatasetKind::uniform) {
        dj["min_nodes"] = d.min_nodes;
        dj["max_nodes"] = d.max_nodes;
      }
      j["dataset"] = dj;
      j["packing"] = to_string(s.packing);
      if (s.packing == LoaderSpec::Packing::pad) j["batch_size"] = s.batch_size;
      break;
    }
  }
  j["shuffle"] = s.shuffle;
  if (s.fixed_size) {
    nlohmann::json f{{"num_nodes", s.fixed_size->num_nodes}, {"num_edges", s.fixed_size->num_edges}};
    if (s.kind == LoaderSpec::Kind::graphs) f["num_graphs"] = s.fixed_size->num_graphs;
    j["fixed_size"] = f;
  }
  if (s.batches) j["batches"] = *s.batches;
  j["device_iterations"] = s.device_iterations;
  j["synthetic_data"] = s.synthetic_data;
  j["asynchronous"] = s.asynchronous;
  return j;
}

}  // namespace tilesim::workloads::loaders
