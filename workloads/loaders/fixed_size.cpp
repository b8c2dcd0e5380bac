#include "workloads/loaders/fixed_size.hpp"

#include <stdexcept>
#include <string>

namespace tilesim::workloads::loaders {

namespace {

[[noreturn]] void does_not_fit(const std::string& why, const Padding& p, const FixedSize& size) {
  throw std::invalid_argument("batch does not fit its fixed size: " + why + " (batch: " + std::to_string(p.real_nodes) +
                              " nodes, " + std::to_string(p.real_edges) + " edges, " + std::to_string(p.real_graphs) +
                              " graphs; size: " + std::to_string(size.num_nodes) + " nodes, " +
                              std::to_string(size.num_edges) + " edges, " + std::to_string(size.num_graphs) + " graphs)");
}

// Share i of `amount` split evenly over `pieces` (the first amount % pieces get one more), as
// FixedSizeCollater divides padding among padding graphs.
std::int64_t share(std::int64_t amount, std::int64_t pieces, std::int64_t i) {
  return amount / pieces + (i < amount % pieces ? 1 : 0);
}

}  // namespace

Padding pad_to_fixed_size(Batch& batch, const FixedSize& size) {
  auto& g = batch.graph;
  const bool graph_batch = g.num_graphs > 0;
  Padding p;
  p.real_nodes = g.num_nodes;
  p.real_edges = g.num_edges();
  p.real_graphs = graph_batch ? g.num_graphs : 0;
  if (p.real_nodes > size.num_nodes) does_not_fit("more nodes than the size", p, size);
  if (p.real_edges > size.num_edges) does_not_fit("more edges than the size", p, size);
  p.pad_nodes = size.num_nodes - p.real_nodes;
  p.pad_edges = size.num_edges - p.real_edges;
  if (graph_batch) {
    if (size.num_graphs == 0) does_not_fit("a batch of graphs needs a graph count in its size", p, size);
    if (p.real_graphs > size.num_graphs) does_not_fit("more graphs than the size", p, size);
    p.pad_graphs = size.num_graphs - p.real_graphs;
    if (p.pad_graphs == 0 && (p.pad_nodes > 0 || p.pad_edges > 0)) {
      does_not_fit("padding nodes or edges but no graph left to pad with", p, size);
    }
    if (p.pad_nodes < p.pad_graphs) does_not_fit("fewer padding nodes than padding graphs", p, size);
  } else {
    if (size.num_graphs != 0) does_not_fit("a node batch has no graphs to count", p, size);
    if (p.pad_edges > 0 && p.pad_nodes == 0) does_not_fit("padding edges but no padding node", p, size);
  }

  const std::int64_t groups = graph_batch ? p.pad_graphs : (p.pad_nodes > 0 ? 1 : 0);
  const bool typed = !g.edge_type.empty();
  g.src.reserve(static_cast<std::size_t>(size.num_edges));
  g.dst.reserve(static_cast<std::size_t>(size.num_edges));
  for (std::int64_t i = 0; i < groups; ++i) {
    const auto first = static_cast<std::int32_t>(g.num_nodes);
    const std::int64_t nodes = share(p.pad_nodes, groups, i);
    g.num_nodes += nodes;
    if (graph_batch) g.graph_of_node.insert(g.graph_of_node.end(), static_cast<std::size_t>(nodes),
                                            static_cast<std::int32_t>(p.real_graphs + i));
    const std::int64_t edges = share(p.pad_edges, groups, i);
    g.src.insert(g.src.end(), static_cast<std::size_t>(edges), first);
    g.dst.insert(g.dst.end(), static_cast<std::size_t>(edges), first);
    if (typed) g.edge_type.insert(g.edge_type.end(), static_cast<std::size_t>(edges), 0);
  }
  if (graph_batch) g.num_graphs = size.num_graphs;
  return p;
}

}  // namespace tilesim::workloads::loaders
