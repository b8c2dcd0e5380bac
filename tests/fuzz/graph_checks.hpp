#pragma once
// What a graph file loader must return when it accepts a file (workloads/graphs/graph.hpp): one source
// and one destination per edge, every id a node of the graph, at most 2^31 - 1 nodes and edges.
#include <limits>
#include <string>

#include "tests/fuzz/fuzz_support.hpp"
#include "workloads/graphs/graph.hpp"

namespace tilesim::fuzz {

inline void check_edge_list(const workloads::graphs::EdgeList& g) {
  constexpr std::int64_t max_id = std::numeric_limits<std::int32_t>::max();
  if (g.num_nodes < 0 || g.num_nodes > max_id) finding("a graph of " + std::to_string(g.num_nodes) + " nodes");
  if (g.src.size() != g.dst.size()) finding("a graph with " + std::to_string(g.src.size()) + " sources and " +
                                            std::to_string(g.dst.size()) + " destinations");
  if (g.num_edges() > max_id) finding("a graph of " + std::to_string(g.num_edges()) + " edges");
  for (std::size_t e = 0; e < g.src.size(); ++e) {
    if (g.src[e] < 0 || g.src[e] >= g.num_nodes || g.dst[e] < 0 || g.dst[e] >= g.num_nodes) {
      finding("edge " + std::to_string(e) + " (" + std::to_string(g.src[e]) + ", " + std::to_string(g.dst[e]) +
              ") outside the graph's " + std::to_string(g.num_nodes) + " nodes");
    }
  }
}

}  // namespace tilesim::fuzz
