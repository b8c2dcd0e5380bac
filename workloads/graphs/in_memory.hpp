#pragma once
// Graphs handed to tilesim in memory rather than named in a file: the Python module's
// tilesim.Graph.from_edge_index (a PyG-style [2, E] edge_index array). A workload's graph object
// {"edge_index": NAME, "num_nodes": N, "num_edges": E} refers to one by NAME while a
// ScopedInMemoryGraphs that lists it is alive; anywhere else (a workload file read by the CLI) the
// name is an input error. The arrays stay the caller's: build() copies them once, into the EdgeList
// the engine uses, so a user's tensor is not copied twice.
#include <cstdint>
#include <map>
#include <string>

namespace tilesim::workloads::graphs {

struct InMemoryEdges {
  // Row-major [2, num_edges] int64, as PyG's edge_index: src row first, then dst row. Node ids are
  // checked to lie in [0, num_nodes) when the edges are listed (check_in_memory_edges).
  const std::int64_t* edge_index = nullptr;
  std::int64_t num_edges = 0;
  std::int64_t num_nodes = 0;
  // Optional PyG `batch` vector, [num_nodes] int64 in [0, num_graphs): the graph each node belongs to.
  const std::int64_t* batch = nullptr;
  std::int64_t num_graphs = 0;
};

// Throws InputError naming `who` (e.g. "Graph.from_edge_index") and the element for a node id outside
// [0, num_nodes), a batch id outside [0, num_graphs), a batch vector that is not non-decreasing (PyG
// batches are) or more than 2^31 - 1 edges or nodes (every backend indexes with int32).
void check_in_memory_edges(const InMemoryEdges& edges, const std::string& who);

// Lists named in-memory graphs for as long as it lives (one at a time per thread; nesting replaces
// the outer list until the inner one ends).
class ScopedInMemoryGraphs {
 public:
  explicit ScopedInMemoryGraphs(std::map<std::string, InMemoryEdges> graphs);
  ~ScopedInMemoryGraphs();
  ScopedInMemoryGraphs(const ScopedInMemoryGraphs&) = delete;
  ScopedInMemoryGraphs& operator=(const ScopedInMemoryGraphs&) = delete;

 private:
  std::map<std::string, InMemoryEdges> graphs_;
  const std::map<std::string, InMemoryEdges>* outer_;
};

// The graph listed under `name`, or nullptr when no live ScopedInMemoryGraphs lists it.
const InMemoryEdges* find_in_memory_graph(const std::string& name);

}  // namespace tilesim::workloads::graphs
