// The workload's "graph" object: parsing (strict, every default resolved into the echo), and build().
#include <cmath>
#include <filesystem>
#include <limits>

#include "common/error.hpp"
#include "common/host_info.hpp"
#include "common/limits.hpp"
#include "common/strict_json.hpp"
#include "workloads/graphs/edge_options.hpp"
#include "workloads/graphs/generators.hpp"
#include "workloads/graphs/graph.hpp"
#include "workloads/graphs/in_memory.hpp"
#include "workloads/graphs/loaders.hpp"
#include "workloads/graphs/presets.hpp"

namespace tilesim::workloads::graphs {

namespace {

using nlohmann::json;
constexpr std::int64_t max_size = limits::max_size;
// Edge ids and counts are int32 on every backend; edges beyond this cannot be indexed.
constexpr std::int64_t max_edges = std::numeric_limits<std::int32_t>::max();
constexpr double max_plod_beta = 1e15;

const std::vector<std::string> generator_names = {"erdos_renyi", "rmat", "plod", "small_world", "molecules", "chung_lu"};
const std::vector<std::string> order_names = {"as_generated", "sorted_by_destination", "shuffled"};

bool boolean_or(ObjectReader& r, const std::string& key, bool fallback) {
  if (r.has(key)) return r.boolean(key);
  r.ignore(key);
  return fallback;
}

std::int64_t size_of(ObjectReader& r, const std::string& key, std::int64_t min) {
  return r.integer(key, min, max_size);
}

[[noreturn]] void too_many_edges(const ObjectReader& r, const std::string& key, double edges) {
  throw InputError(r.file(), r.path_of(key),
                   "at most 2^31 - 1 = " + std::to_string(max_edges) + " edges (edge indices are int32)",
                   "a graph of about " + std::to_string(static_cast<long long>(edges)) + " edges");
}

// A graph and the copies its clean-up makes take about 16 bytes per edge (src and dst, twice);
// refuse graphs that would need more than half of this host's memory, as workloads do for tensors.
// Checked when the graph object is read, before a generator allocates anything: about 16 bytes per
// edge (two int32 endpoints, then a CSR copy) and 24 per node (a generator's per-node weights, blocks
// and labels; every later user's per-node arrays).
void check_host_memory(const ObjectReader& r, const std::string& key, double edges, double nodes = 0) {
  const double half_bytes = static_cast<double>(host_input_memory_bytes());
  const double need_bytes = 16.0 * edges + 24.0 * nodes;
  if (half_bytes > 0 && need_bytes > half_bytes) {
    throw InputError(r.file(), r.path_of(key), "a graph that fits in half of this host's memory (" +
                         std::to_string(static_cast<long long>(half_bytes / 1e9)) + " GB; about 16 bytes per edge and 24 per node)",
                     std::to_string(static_cast<long long>(edges)) + " edges and " + std::to_string(static_cast<long long>(nodes)) +
                         " nodes, about " + std::to_string(static_cast<long long>(need_bytes / 1e9)) + " GB");
  }
}

json parse_generator(ObjectReader& r) {
  const std::string name = r.one_of("generator", generator_names);
  json s = {{"generator", name}};
  if (name == "erdos_renyi") {
    const bool self_loops = boolean_or(r, "self_loops", true);
    s["num_nodes"] = size_of(r, "num_nodes", self_loops ? 1 : 2);
    s["num_edges"] = size_of(r, "num_edges", 1);
    s["self_loops"] = self_loops;
  } else if (name == "rmat") {
    std::int64_t n = 0;
    if (r.has("scale") == r.has("num_nodes")) {
      throw InputError(r.file(), r.path(), "exactly one of \"scale\" and \"num_nodes\" for the rmat generator",
                       r.has("scale") ? "both" : "neither");
    }
    if (r.has("scale")) {
      n = std::int64_t{1} << r.integer("scale", 1, 30);
      r.ignore("num_nodes");
    } else {
      n = size_of(r, "num_nodes", 2);
      r.ignore("scale");
    }
    if (r.has("num_edges") && r.has("edge_factor")) {
      throw InputError(r.file(), r.path(), "at most one of \"num_edges\" and \"edge_factor\"", "both");
    }
    double edges = 0;
    if (r.has("num_edges")) {
      edges = static_cast<double>(size_of(r, "num_edges", 1));
      r.ignore("edge_factor");
    } else {
      edges = static_cast<double>(n) * static_cast<double>(r.integer_or("edge_factor", 1, 1 << 20, 16));  // Graph500 default 16
    }
    if (edges > static_cast<double>(max_edges)) too_many_edges(r, "num_edges", edges);
    const double a = r.number_or("a", 0, 1, 0.57), b = r.number_or("b", 0, 1, 0.19);
    const double c = r.number_or("c", 0, 1, 0.19), d = r.number_or("d", 0, 1, 0.05);
    if (std::abs(a + b + c + d - 1.0) > 1e-6) {
      throw InputError(r.file(), r.path(), "R-MAT probabilities a + b + c + d = 1", std::to_string(a + b + c + d));
    }
    s.update({{"num_nodes", n}, {"num_edges", static_cast<std::int64_t>(edges)}, {"a", a}, {"b", b}, {"c", c}, {"d", d}});
  } else if (name == "plod") {
    const std::int64_t n = size_of(r, "num_nodes", 2);
    const double alpha = r.number("alpha", 1e-3, 100);
    if (r.has("beta") == r.has("average_degree")) {
      throw InputError(r.file(), r.path(), "exactly one of \"beta\" and \"average_degree\" for the plod generator",
                       r.has("beta") ? "both" : "neither");
    }
    double beta = 0;
    if (r.has("beta")) {
      beta = r.number("beta", 1e-9, max_plod_beta);
      r.ignore("average_degree");
    } else {
      const double average = r.number("average_degree", 1, static_cast<double>(n - 1));
      beta = plod_beta_for_average_degree(n, alpha, average);
      // Past the largest beta a workload may state the search gives up short of the average (and its
      // beta would make an echo that is not valid input).
      if (beta > max_plod_beta) {
        throw InputError(r.file(), r.path_of("average_degree"),
                         "an average degree PLOD reaches with beta at most 1e15 (at most " +
                             std::to_string(plod_average_degree(n, alpha, max_plod_beta)) + " for this num_nodes and alpha)",
                         describe_json(average));
      }
      r.ignore("beta");
    }
    const double edges = static_cast<double>(n) * plod_average_degree(n, alpha, beta) / 2;
    if (edges > static_cast<double>(max_edges)) too_many_edges(r, "beta", edges);
    s.update({{"num_nodes", n}, {"alpha", alpha}, {"beta", beta}});
  } else if (name == "small_world") {
    const std::int64_t n = size_of(r, "num_nodes", 3);
    const std::int64_t k = r.integer("k", 2, n - 1);
    if (k % 2 != 0) throw InputError(r.file(), r.path_of("k"), "an even k (k / 2 neighbours on each side)", std::to_string(k));
    if (static_cast<double>(n) * static_cast<double>(k / 2) > static_cast<double>(max_edges)) {
      too_many_edges(r, "k", static_cast<double>(n) * static_cast<double>(k / 2));
    }
    s.update({{"num_nodes", n}, {"k", k}, {"rewire_probability", r.number("rewire_probability", 0, 1)}});
  } else if (name == "molecules") {
    const std::int64_t graphs = size_of(r, "num_graphs", 1);
    const std::int64_t min_nodes = r.integer_or("min_nodes", 2, 1000, 10);
    const std::int64_t max_nodes = r.integer_or("max_nodes", min_nodes, 1000, std::max<std::int64_t>(30, min_nodes));
    const std::string connectivity = r.has("connectivity") ? r.one_of("connectivity", {"complete", "knn"}) : "complete";
    if (!r.has("connectivity")) r.ignore("connectivity");
    s.update({{"num_graphs", graphs}, {"min_nodes", min_nodes}, {"max_nodes", max_nodes}, {"connectivity", connectivity}});
    if (connectivity == "knn") {
      s["k"] = r.integer("k", 1, 999);
    } else if (r.has_refused("k")) {
      throw InputError(r.file(), r.path_of("k"), "no \"k\" for complete molecule graphs (k is for \"connectivity\": \"knn\")",
                       describe_json(r.value("k")));
    }
    const double edges = static_cast<double>(graphs) * static_cast<double>(max_nodes) * static_cast<double>(max_nodes - 1);
    if (edges > static_cast<double>(max_edges)) too_many_edges(r, "num_graphs", edges);
  } else {  // chung_lu
    const std::int64_t n = size_of(r, "num_nodes", 2);
    const bool symmetric = boolean_or(r, "symmetric", true);
    const std::int64_t edges = size_of(r, "num_edges", symmetric ? 2 : 1);
    if (symmetric && edges % 2 != 0) {
      throw InputError(r.file(), r.path_of("num_edges"), "an even num_edges (symmetric: each pair stored both ways)",
                       std::to_string(edges));
    }
    const double mean = static_cast<double>(edges) / static_cast<double>(n);
    s.update({{"num_nodes", n},
              {"num_edges", edges},
              {"symmetric", symmetric},
              {"exponent", r.number_or("exponent", 1.01, 100, 2.5)},
              {"max_degree", r.number("max_degree", mean, static_cast<double>(edges))},
              {"num_blocks", r.integer_or("num_blocks", 1, n, 1)},
              {"intra_block_fraction", r.number_or("intra_block_fraction", 0, 1, 0)}});
  }
  const double edges = s.contains("num_edges") ? s["num_edges"].get<double>() : 0.0;
  const double nodes = s.contains("num_nodes") ? s["num_nodes"].get<double>() : 0.0;
  check_host_memory(r, 24.0 * nodes > 16.0 * edges ? "num_nodes" : "num_edges", edges, nodes);
  return s;
}

json parse_preset(ObjectReader& r, std::int64_t& num_features) {
  const std::string name = r.string("preset");
  const Preset preset = load_preset(name, r.file(), r.path_of("preset"));
  json s = {{"preset", name}};
  if (preset.generator == PresetGenerator::molecules) {
    s["num_graphs"] = r.integer_or("num_graphs", 1, max_size, preset.molecules.num_graphs);
    const double edges = s["num_graphs"].get<double>() * static_cast<double>(preset.molecules.max_nodes) *
                         static_cast<double>(preset.molecules.max_nodes - 1);
    if (edges > static_cast<double>(max_edges)) too_many_edges(r, "num_graphs", edges);
  } else if (r.has_refused("num_graphs")) {
    throw InputError(r.file(), r.path_of("num_graphs"), "no \"num_graphs\" (only molecule presets such as qm9 take it)",
                     describe_json(r.value("num_graphs")));
  }
  // A dataset-sized preset (ogbn-papers100m's 1.6e9 edges) is refused where it would not fit, as a
  // generator of its size is, before anything is allocated.
  if (preset.generator == PresetGenerator::chung_lu)
    check_host_memory(r, "preset", static_cast<double>(preset.power_law.num_edges), static_cast<double>(preset.power_law.num_nodes));
  num_features = preset.num_features;
  return s;
}

json parse_file(ObjectReader& r, const std::string& workload_file, std::string& resolved) {
  const std::string path = r.string("file");
  namespace fs = std::filesystem;
  fs::path p(path);
  if (p.is_relative() && !workload_file.empty()) p = fs::path(workload_file).parent_path() / p;
  // Absolute, so the echo (to_json) parses back to the same file from anywhere.
  std::error_code ec;
  const fs::path absolute = fs::absolute(p, ec);
  resolved = (ec ? p : absolute).lexically_normal().string();
  const std::string reason = unreadable_file_reason(resolved);
  if (!reason.empty()) {
    throw InputError(r.file(), r.path_of("file"), "a graph file (relative paths are relative to the workload file)",
                     describe_json(path) + " (" + resolved + ": " + reason + ")");
  }
  std::string format;
  if (r.has("format")) {
    format = r.one_of("format", {"edge_list", "matrix_market", "metis"});
  } else {
    r.ignore("format");
    format = to_string(format_for_file_name(path));
  }
  return {{"file", path}, {"format", format}};
}

// {"edge_index": NAME}: a graph the caller lists in memory (in_memory.hpp; the Python module). Its
// sizes are echoed, and checked against the listed arrays when the object gives them.
json parse_edge_index(ObjectReader& r) {
  const std::string name = r.string("edge_index");
  const InMemoryEdges* g = find_in_memory_graph(name);
  if (!g) {
    throw InputError(r.file(), r.path_of("edge_index"),
                     "the name of a graph handed over in memory (the Python module's tilesim.Graph.from_edge_index; "
                     "a workload file names a \"generator\", \"preset\" or \"file\" instead)",
                     describe_json(name) + ", which no caller has handed over");
  }
  json s = {{"edge_index", name}, {"num_nodes", g->num_nodes}, {"num_edges", g->num_edges}};
  if (g->batch) s["num_graphs"] = g->num_graphs;
  for (const char* key : {"num_nodes", "num_edges", "num_graphs"}) {
    if (!r.has(key)) {
      r.ignore(key);
      continue;
    }
    const std::int64_t given = r.integer(key, 1, max_edges);
    if (!s.contains(key) || s[key].get<std::int64_t>() != given)
      throw InputError(r.file(), r.path_of(key), "the in-memory graph's own " + std::string(key) + " (" +
                           (s.contains(key) ? std::to_string(s[key].get<std::int64_t>()) : std::string("none: it has no batch vector")) + ")",
                       std::to_string(given));
  }
  return s;
}

FileFormat format_named(const std::string& name) {
  if (name == "matrix_market") return FileFormat::matrix_market;
  if (name == "metis") return FileFormat::metis;
  return FileFormat::edge_list;
}

std::string order_name(EdgeOrder order) { return order_names[static_cast<std::size_t>(order)]; }

}  // namespace

GraphSpec parse_graph_spec(const json& object, const std::string& file, const std::string& json_path) {
  ObjectReader r(object, file, json_path);
  const int sources = static_cast<int>(r.has("generator")) + static_cast<int>(r.has("preset")) + static_cast<int>(r.has("file")) +
                      static_cast<int>(r.has("edge_index"));
  if (sources != 1) {
    throw InputError(file, json_path, "exactly one graph source: \"generator\", \"preset\", \"file\" or (from Python) \"edge_index\"",
                     sources == 0 ? "none" : std::to_string(sources));
  }
  GraphSpec spec;
  spec.file = file;
  spec.json_path = json_path;
  std::int64_t preset_features = 0;
  if (r.has("generator")) {
    spec.source = parse_generator(r);
  } else if (r.has("preset")) {
    spec.source = parse_preset(r, preset_features);
  } else if (r.has("edge_index")) {
    spec.source = parse_edge_index(r);
  } else {
    spec.source = parse_file(r, file, spec.resolved_file);
  }
  spec.symmetrize = boolean_or(r, "symmetrize", false);
  spec.deduplicate = boolean_or(r, "deduplicate", false);
  spec.remove_self_loops = boolean_or(r, "remove_self_loops", false);
  spec.add_self_loops = boolean_or(r, "add_self_loops", false);
  if (r.has("edge_order")) {
    const std::string order = r.one_of("edge_order", order_names);
    for (std::size_t i = 0; i < order_names.size(); ++i) {
      if (order == order_names[i]) spec.order = static_cast<EdgeOrder>(i);
    }
  } else {
    r.ignore("edge_order");
  }
  spec.num_features = r.integer_or("num_features", 1, max_size, preset_features);
  spec.num_relations = static_cast<std::int32_t>(r.integer_or("num_relations", 0, 1 << 20, 0));
  r.finish();
  return spec;
}

json to_json(const GraphSpec& spec) {
  json out = spec.source;
  if (!spec.resolved_file.empty()) out["file"] = spec.resolved_file;
  out["symmetrize"] = spec.symmetrize;
  out["deduplicate"] = spec.deduplicate;
  out["remove_self_loops"] = spec.remove_self_loops;
  out["add_self_loops"] = spec.add_self_loops;
  out["edge_order"] = order_name(spec.order);
  if (spec.num_features > 0) out["num_features"] = spec.num_features;
  if (spec.num_relations > 0) out["num_relations"] = spec.num_relations;
  return out;
}

namespace {

// The one copy of an in-memory graph's arrays: int64 ids (checked when listed) into the int32 edge list.
EdgeList copy_in_memory(const GraphSpec& spec) {
  const std::string name = spec.source["edge_index"].get<std::string>();
  const InMemoryEdges* g = find_in_memory_graph(name);
  if (!g)
    throw InputError(spec.file, (spec.json_path.empty() ? "graph" : spec.json_path) + ".edge_index",
                     "an in-memory graph still handed over when the workload runs", "\"" + name + "\", no longer listed");
  EdgeList out;
  out.num_nodes = g->num_nodes;
  out.src.assign(g->edge_index, g->edge_index + g->num_edges);
  out.dst.assign(g->edge_index + g->num_edges, g->edge_index + 2 * g->num_edges);
  if (g->batch) {
    out.graph_of_node.assign(g->batch, g->batch + g->num_nodes);
    out.num_graphs = g->num_graphs;
  }
  return out;
}

EdgeList build_source(const GraphSpec& spec, std::uint64_t seed) {
  const json& s = spec.source;
  if (s.contains("edge_index")) return copy_in_memory(spec);
  if (s.contains("file")) {
    return load_graph_file(spec.resolved_file.empty() ? s["file"].get<std::string>() : spec.resolved_file,
                           format_named(s["format"].get<std::string>()));
  }
  if (s.contains("preset")) {
    const Preset preset = load_preset(s["preset"].get<std::string>(), "", "preset");
    if (preset.generator == PresetGenerator::molecules) {
      MoleculeParams m = preset.molecules;
      m.num_graphs = s["num_graphs"].get<std::int64_t>();
      return molecules(m, seed);
    }
    return power_law(preset.power_law, seed);
  }
  const std::string name = s["generator"].get<std::string>();
  if (name == "erdos_renyi") {
    return erdos_renyi({s["num_nodes"].get<std::int64_t>(), s["num_edges"].get<std::int64_t>(), s["self_loops"].get<bool>()}, seed);
  }
  if (name == "rmat") {
    return rmat({s["num_nodes"].get<std::int64_t>(), s["num_edges"].get<std::int64_t>(), s["a"].get<double>(),
                 s["b"].get<double>(), s["c"].get<double>(), s["d"].get<double>()},
                seed);
  }
  if (name == "plod") return plod({s["num_nodes"].get<std::int64_t>(), s["alpha"].get<double>(), s["beta"].get<double>()}, seed);
  if (name == "small_world") {
    return small_world({s["num_nodes"].get<std::int64_t>(), s["k"].get<std::int64_t>(), s["rewire_probability"].get<double>()}, seed);
  }
  if (name == "molecules") {
    MoleculeParams m;
    m.num_graphs = s["num_graphs"].get<std::int64_t>();
    m.min_nodes = s["min_nodes"].get<std::int64_t>();
    m.max_nodes = s["max_nodes"].get<std::int64_t>();
    m.connectivity = s["connectivity"].get<std::string>() == "knn" ? MoleculeConnectivity::knn : MoleculeConnectivity::complete;
    if (s.contains("k")) m.k = s["k"].get<std::int64_t>();
    return molecules(m, seed);
  }
  PowerLawParams p;
  p.num_nodes = s["num_nodes"].get<std::int64_t>();
  p.num_edges = s["num_edges"].get<std::int64_t>();
  p.symmetric = s["symmetric"].get<bool>();
  p.exponent = s["exponent"].get<double>();
  p.max_degree = s["max_degree"].get<double>();
  p.num_blocks = s["num_blocks"].get<std::int64_t>();
  p.intra_block_fraction = s["intra_block_fraction"].get<double>();
  return power_law(p, seed);
}

}  // namespace

EdgeList build(const GraphSpec& spec, std::uint64_t seed) {
  EdgeList graph = build_source(spec, seed);
  // Symmetrising or adding loops may push a graph past int32 edge ids.
  const double final_edges = static_cast<double>(graph.num_edges()) * (spec.symmetrize ? 2.0 : 1.0) +
                             (spec.add_self_loops ? static_cast<double>(graph.num_nodes) : 0.0);
  const std::string json_path = spec.json_path.empty() ? "graph" : spec.json_path;
  if (final_edges > static_cast<double>(max_edges)) {
    throw InputError(spec.file, json_path, "at most 2^31 - 1 edges after symmetrize/add_self_loops (edge indices are int32)",
                     "up to " + std::to_string(static_cast<long long>(final_edges)));
  }
  const std::int64_t source_edges = graph.num_edges();
  apply_edge_options(graph, spec, seed);
  // Every layer passes messages along edges, and an op of zero rows is no op: refuse an edgeless graph
  // here, where the message can say why, rather than in the first op that meets it.
  if (graph.num_edges() == 0) {
    const bool file_source = spec.source.contains("file");
    throw InputError(spec.file, file_source && source_edges == 0 ? json_path + ".file" : json_path,
                     "a graph with at least one edge",
                     source_edges == 0 ? (file_source ? describe_json(spec.source["file"]) + ", which has no edges" : "no edges")
                                       : "none left of its " + std::to_string(source_edges) + " by the clean-up options");
  }
  return graph;
}

}  // namespace tilesim::workloads::graphs
