#pragma once
// Graph algorithms on EdgeLists: degree statistics, the reverse Cuthill-McKee ordering (Boost.Graph)
// and METIS k-way min-edge-cut partitions. Pure and deterministic; the orderings and partitions look at
// the undirected simple graph underneath (both directions, no loops, no repeats), as both algorithms
// are defined on it.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/graphs/graph.hpp"

namespace tilesim::workloads::graphs {

struct DegreeStats {
  std::int64_t min = 0;
  std::int64_t max = 0;
  double mean = 0;
  double stddev = 0;
  std::int64_t zero_count = 0;  // nodes with degree 0
  nlohmann::json to_json() const;
};
// Degrees counted over destinations (in) or sources (out), repeats and loops included.
DegreeStats in_degree_stats(const EdgeList& graph);
DegreeStats out_degree_stats(const EdgeList& graph);

// A relabelling: label_of_node[v] is v's new id; a permutation of 0..N-1.
using Labels = std::vector<std::int32_t>;

// Reverse Cuthill-McKee (Boost cuthill_mckee_ordering, reversed; every connected component from a
// pseudo-peripheral node of minimum degree).
Labels reverse_cuthill_mckee(const EdgeList& graph);
// Largest |label(src) - label(dst)| over the edges (the adjacency matrix's bandwidth); identity when
// `label_of_node` is empty.
std::int64_t bandwidth(const EdgeList& graph, const Labels& label_of_node = {});
// Applies a relabelling to the graph's edges.
EdgeList relabel(const EdgeList& graph, const Labels& label_of_node);

// METIS_PartGraphKway: num_parts parts of near-equal node counts (METIS's default 3% imbalance),
// minimising the undirected edges cut. Deterministic in `seed`. part_of_node[v] in [0, num_parts).
// num_parts is capped at the node count.
std::vector<std::int32_t> metis_partition(const EdgeList& graph, std::int32_t num_parts, std::uint64_t seed);
// Directed edges of `graph` whose endpoints lie in different parts.
std::int64_t edges_cut(const EdgeList& graph, const std::vector<std::int32_t>& part_of_node);

}  // namespace tilesim::workloads::graphs
