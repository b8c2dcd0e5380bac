#pragma once
// Graphs as workloads see them: a directed edge list over nodes 0..num_nodes-1 (edge e goes from
// src[e] to dst[e]; messages flow src -> dst, as in PyG's edge_index with flow "source_to_target"),
// with an optional relation type per edge (RGCN). Generators, presets and file loaders produce it
// (workloads/graphs/*.cpp); graph algorithms that need a real container (ordering, partitioning,
// degree statistics) convert it to a Boost.Graph compressed_sparse_row_graph internally.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tilesim::workloads::graphs {

struct EdgeList {
  std::int64_t num_nodes = 0;
  std::vector<std::int32_t> src;
  std::vector<std::int32_t> dst;
  std::vector<std::int32_t> edge_type;  // empty, or one relation type per edge in [0, num_relations)
  std::int32_t num_relations = 0;       // 0 when edge_type is empty
  // A batch of small graphs (the molecule generator): the graph each node belongs to, PyG's `batch`
  // vector, in [0, num_graphs). Empty for a single graph.
  std::vector<std::int32_t> graph_of_node;
  std::int64_t num_graphs = 0;

  std::int64_t num_edges() const { return static_cast<std::int64_t>(src.size()); }
};

// Edge order, a workload option: as the source produced them, sorted by destination (then source;
// segment-friendly, low contention) or shuffled (the torch_scatter "COL" case).
enum class EdgeOrder { as_generated, sorted_by_destination, shuffled };

// What a workload's "graph" object says (format in docs/graph-format.md): one source (a generator with
// its parameters, a dataset-shaped preset, or a file), then the PyG-style clean-up and the edge order.
struct GraphSpec {
  nlohmann::json source;        // the validated source object, echoed in the report
  std::string resolved_file;    // for file sources: the path resolved against the workload file
  bool symmetrize = false;      // add the reverse of every edge (to_undirected)
  bool deduplicate = false;     // drop repeated (src, dst) pairs (coalesce)
  bool remove_self_loops = false;
  bool add_self_loops = false;  // one (n, n) per node, after removal/dedup (GCN/GAT add their own: see layers)
  EdgeOrder order = EdgeOrder::as_generated;
  std::int64_t num_features = 0;  // node feature width the preset or the workload gives (0: not given)
  std::int32_t num_relations = 0;  // > 0: a uniform random relation type per edge in [0, num_relations) (RGCN)
  std::string file, json_path;     // where the object was read (parse_graph_spec), for build()'s messages
};

// Parses the "graph" object at `json_path` of `file`. Throws tilesim::InputError naming the file, the
// JSON path, what was expected and what was found (unknown keys, unknown generator or preset names,
// impossible sizes, missing files).
GraphSpec parse_graph_spec(const nlohmann::json& object, const std::string& file, const std::string& json_path);
nlohmann::json to_json(const GraphSpec& spec);

// Builds the graph: deterministic in `seed`. File sources are read here; a malformed file is an
// InputError naming the file and line, and a graph left without edges (an empty file, or only
// self-loops under remove_self_loops) one naming the spec's file and JSON path. Node ids of loaded
// graphs are remapped to 0..N-1 in order of first appearance.
EdgeList build(const GraphSpec& spec, std::uint64_t seed);

}  // namespace tilesim::workloads::graphs
