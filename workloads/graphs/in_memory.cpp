// In-memory graph sources (in_memory.hpp): the list of live names and the checks of the arrays.
#include "workloads/graphs/in_memory.hpp"

#include <limits>

#include "common/error.hpp"

namespace tilesim::workloads::graphs {

namespace {
thread_local const std::map<std::string, InMemoryEdges>* live_graphs = nullptr;
constexpr std::int64_t max_int32 = std::numeric_limits<std::int32_t>::max();
}  // namespace

void check_in_memory_edges(const InMemoryEdges& g, const std::string& who) {
  if (g.num_nodes < 1 || g.num_nodes > max_int32)
    throw InputError("", who + ": num_nodes", "a node count in [1, 2^31 - 1]", std::to_string(g.num_nodes));
  if (g.num_edges < 1 || g.num_edges > max_int32)
    throw InputError("", who + ": edge_index", "[2, E] with E in [1, 2^31 - 1] edges (every backend indexes with int32)",
                     std::to_string(g.num_edges) + " edges");
  for (int row = 0; row < 2; ++row) {
    const std::int64_t* ids = g.edge_index + row * g.num_edges;
    for (std::int64_t e = 0; e < g.num_edges; ++e) {
      if (ids[e] < 0 || ids[e] >= g.num_nodes)
        throw InputError("", who + ": edge_index[" + std::to_string(row) + "][" + std::to_string(e) + "]",
                         "a node id in [0, " + std::to_string(g.num_nodes) + ") (num_nodes)", std::to_string(ids[e]));
    }
  }
  if (!g.batch) return;
  if (g.num_graphs < 1 || g.num_graphs > max_int32)
    throw InputError("", who + ": batch", "a graph count in [1, 2^31 - 1]", std::to_string(g.num_graphs));
  for (std::int64_t n = 0; n < g.num_nodes; ++n) {
    if (g.batch[n] < 0 || g.batch[n] >= g.num_graphs)
      throw InputError("", who + ": batch[" + std::to_string(n) + "]", "a graph id in [0, " + std::to_string(g.num_graphs) + ")",
                       std::to_string(g.batch[n]));
    if (n > 0 && g.batch[n] < g.batch[n - 1])
      throw InputError("", who + ": batch[" + std::to_string(n) + "]",
                       "a non-decreasing batch vector (nodes of one graph together, as PyG's Batch stores them)",
                       std::to_string(g.batch[n]) + " after " + std::to_string(g.batch[n - 1]));
  }
}

ScopedInMemoryGraphs::ScopedInMemoryGraphs(std::map<std::string, InMemoryEdges> graphs)
    : graphs_(std::move(graphs)), outer_(live_graphs) {
  live_graphs = &graphs_;
}

ScopedInMemoryGraphs::~ScopedInMemoryGraphs() { live_graphs = outer_; }

const InMemoryEdges* find_in_memory_graph(const std::string& name) {
  if (!live_graphs) return nullptr;
  const auto it = live_graphs->find(name);
  return it == live_graphs->end() ? nullptr : &it->second;
}

}  // namespace tilesim::workloads::graphs
