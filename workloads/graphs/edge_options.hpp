#pragma once
// The PyG-style clean-up of a built graph, in this order: remove self-loops, symmetrise (append the
// reverse of every edge that is not a loop), deduplicate (coalesce: sorts by source then destination and
// keeps one of each pair, as torch_geometric.utils.coalesce), add one self-loop per node (appended, as
// add_self_loops), the edge order, then a relation type per edge when num_relations > 0.
#include <cstdint>

#include "workloads/graphs/graph.hpp"

namespace tilesim::workloads::graphs {

void apply_edge_options(EdgeList& graph, const GraphSpec& spec, std::uint64_t seed);

// Stable counting sorts (linear time, for 100M-edge graphs): by destination then source, or by source
// then destination. Relation types travel with their edges.
void sort_by_destination(EdgeList& graph);
void sort_by_source(EdgeList& graph);

}  // namespace tilesim::workloads::graphs
