// The packers of fixed_size.hpp: which dataset graphs share a fixed-size batch.
#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "workloads/loaders/fixed_size.hpp"

namespace tilesim::workloads::loaders {

namespace {

struct Fill {
  std::int64_t nodes = 0, edges = 0, graphs = 0;
};

// The limits a pack's real graphs respect (fixed_size.hpp). With graphs of n_i nodes the padding
// condition reads sum(n_i - 1) <= num_nodes - num_graphs, and likewise for edges: each graph takes
// n_i - 1 of a pack's room, the padding node its slot no longer needs making up the other one.
class Limits {
 public:
  explicit Limits(const FixedSize& size)
      : nodes_(size.num_nodes - 1), edges_(size.num_edges - 1), graphs_(size.num_graphs - 1) {
    if (size.num_graphs < 2) {
      throw std::invalid_argument("packing needs num_graphs >= 2 (one graph is left for the padding), got " +
                                  std::to_string(size.num_graphs));
    }
  }
  // Room left in nodes (edges): what the pack's real nodes may still grow by, less one per free graph slot.
  std::int64_t node_room(const Fill& pack) const { return (nodes_ - pack.nodes) - (graphs_ - pack.graphs); }
  std::int64_t edge_room(const Fill& pack) const { return (edges_ - pack.edges) - (graphs_ - pack.graphs); }
  bool fits(const Fill& pack, std::int64_t nodes, std::int64_t edges) const {
    return pack.graphs < graphs_ && node_room(pack) >= nodes - 1 && edge_room(pack) >= edges - 1;
  }
  bool full(const Fill& pack) const { return pack.graphs == graphs_; }

 private:
  std::int64_t nodes_, edges_, graphs_;
};

void check_fits_alone(const Limits& limits, const GraphDataset& dataset, std::int32_t g, const FixedSize& size) {
  if (g < 0 || g >= dataset.num_graphs()) {
    throw std::invalid_argument("graph " + std::to_string(g) + " is not in [0, " + std::to_string(dataset.num_graphs()) + ")");
  }
  if (!limits.fits(Fill{}, dataset.nodes_per_graph[static_cast<std::size_t>(g)], dataset.edges_of(g))) {
    throw std::invalid_argument("graph " + std::to_string(g) + " (" +
                                std::to_string(dataset.nodes_per_graph[static_cast<std::size_t>(g)]) + " nodes, " +
                                std::to_string(dataset.edges_of(g)) + " edges) does not fit a batch of " +
                                std::to_string(size.num_nodes) + " nodes, " + std::to_string(size.num_edges) +
                                " edges and " + std::to_string(size.num_graphs) + " graphs with room for its padding");
  }
}

void add(Fill& pack, std::int64_t nodes, std::int64_t edges) {
  pack.nodes += nodes;
  pack.edges += edges;
  ++pack.graphs;
}

}  // namespace

std::vector<std::vector<std::int32_t>> pack_stream(const GraphDataset& dataset, const std::vector<std::int32_t>& order,
                                                   const FixedSize& size) {
  const Limits limits(size);
  std::vector<std::vector<std::int32_t>> packs;
  Fill current;
  for (std::int32_t g : order) {
    check_fits_alone(limits, dataset, g, size);
    const std::int64_t nodes = dataset.nodes_per_graph[static_cast<std::size_t>(g)], edges = dataset.edges_of(g);
    if (packs.empty() || !limits.fits(current, nodes, edges)) {
      packs.emplace_back();
      current = Fill{};
    }
    packs.back().push_back(g);
    add(current, nodes, edges);
  }
  return packs;
}

std::vector<std::vector<std::int32_t>> pack_lpfhp(const GraphDataset& dataset, const std::vector<std::int32_t>& order,
                                                  const FixedSize& size) {
  const Limits limits(size);
  for (std::int32_t g : order) check_fits_alone(limits, dataset, g, size);
  // Longest first: the node-count histogram walked from its largest bin (a stable sort keeps the given
  // order within a bin).
  std::vector<std::int32_t> longest_first = order;
  std::stable_sort(longest_first.begin(), longest_first.end(), [&](std::int32_t a, std::int32_t b) {
    return dataset.nodes_per_graph[static_cast<std::size_t>(a)] > dataset.nodes_per_graph[static_cast<std::size_t>(b)];
  });

  std::vector<std::vector<std::int32_t>> packs;
  std::vector<Fill> fills;
  // Open packs by their room, so the fullest that fits is found without trying them all:
  // by_room[r] holds the packs with node room r ordered by edge room, open_rooms the r with any.
  // Packs with every graph slot taken leave.
  using ByEdgeRoom = std::set<std::pair<std::int64_t, std::int32_t>>;
  std::vector<ByEdgeRoom> by_room(static_cast<std::size_t>(std::max<std::int64_t>(limits.node_room(Fill{}), 0) + 1));
  std::set<std::int64_t> open_rooms;
  auto enter = [&](std::int32_t pack) {
    const Fill& fill = fills[static_cast<std::size_t>(pack)];
    by_room[static_cast<std::size_t>(limits.node_room(fill))].emplace(limits.edge_room(fill), pack);
    open_rooms.insert(limits.node_room(fill));
  };
  auto leave = [&](std::int32_t pack) {
    const Fill& fill = fills[static_cast<std::size_t>(pack)];
    auto& room = by_room[static_cast<std::size_t>(limits.node_room(fill))];
    room.erase({limits.edge_room(fill), pack});
    if (room.empty()) open_rooms.erase(limits.node_room(fill));
  };

  for (std::int32_t g : longest_first) {
    const std::int64_t nodes = dataset.nodes_per_graph[static_cast<std::size_t>(g)], edges = dataset.edges_of(g);
    std::int32_t chosen = -1;
    for (auto r = open_rooms.lower_bound(nodes - 1); r != open_rooms.end(); ++r) {
      const ByEdgeRoom& room = by_room[static_cast<std::size_t>(*r)];
      if (room.rbegin()->first < edges - 1) continue;  // none of these has the edges left
      chosen = room.lower_bound({edges - 1, std::numeric_limits<std::int32_t>::min()})->second;
      break;
    }
    if (chosen < 0) {
      chosen = static_cast<std::int32_t>(packs.size());
      packs.emplace_back();
      fills.emplace_back();
    } else {
      leave(chosen);
    }
    packs[static_cast<std::size_t>(chosen)].push_back(g);
    add(fills[static_cast<std::size_t>(chosen)], nodes, edges);
    if (!limits.full(fills[static_cast<std::size_t>(chosen)])) enter(chosen);
  }
  return packs;
}

}  // namespace tilesim::workloads::loaders
