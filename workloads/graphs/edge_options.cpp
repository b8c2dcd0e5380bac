#include "workloads/graphs/edge_options.hpp"

#include <algorithm>
#include <vector>

#include "workloads/graphs/graph_random.hpp"

namespace tilesim::workloads::graphs {

namespace {

// One stable counting-sort pass of every edge array by `key` (src or dst of the same graph).
void counting_pass(EdgeList& g, bool by_dst) {
  const std::vector<std::int32_t>& key = by_dst ? g.dst : g.src;
  std::vector<std::int64_t> start(static_cast<std::size_t>(g.num_nodes) + 1, 0);
  for (std::int32_t k : key) ++start[static_cast<std::size_t>(k) + 1];
  for (std::size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
  const std::size_t m = g.src.size();
  std::vector<std::int32_t> src(m), dst(m), type(g.edge_type.empty() ? 0 : m);
  for (std::size_t e = 0; e < m; ++e) {
    const auto at = static_cast<std::size_t>(start[static_cast<std::size_t>(key[e])]++);
    src[at] = g.src[e];
    dst[at] = g.dst[e];
    if (!type.empty()) type[at] = g.edge_type[e];
  }
  g.src.swap(src);
  g.dst.swap(dst);
  g.edge_type.swap(type);
}

template <class Keep>
void filter_edges(EdgeList& g, Keep keep) {
  std::size_t out = 0;
  for (std::size_t e = 0; e < g.src.size(); ++e) {
    if (!keep(e)) continue;
    g.src[out] = g.src[e];
    g.dst[out] = g.dst[e];
    if (!g.edge_type.empty()) g.edge_type[out] = g.edge_type[e];
    ++out;
  }
  g.src.resize(out);
  g.dst.resize(out);
  if (!g.edge_type.empty()) g.edge_type.resize(out);
}

}  // namespace

void sort_by_destination(EdgeList& graph) {
  counting_pass(graph, /*by_dst=*/false);
  counting_pass(graph, /*by_dst=*/true);
}

void sort_by_source(EdgeList& graph) {
  counting_pass(graph, /*by_dst=*/true);
  counting_pass(graph, /*by_dst=*/false);
}

void apply_edge_options(EdgeList& g, const GraphSpec& spec, std::uint64_t seed) {
  if (spec.remove_self_loops) filter_edges(g, [&](std::size_t e) { return g.src[e] != g.dst[e]; });
  if (spec.symmetrize) {
    const std::size_t m = g.src.size();
    std::size_t loops = 0;
    for (std::size_t e = 0; e < m; ++e) loops += g.src[e] == g.dst[e];
    g.src.reserve(2 * m - loops);
    g.dst.reserve(2 * m - loops);
    for (std::size_t e = 0; e < m; ++e) {
      if (g.src[e] == g.dst[e]) continue;
      g.src.push_back(g.dst[e]);
      g.dst.push_back(g.src[e]);
      if (!g.edge_type.empty()) g.edge_type.push_back(g.edge_type[e]);
    }
  }
  if (spec.deduplicate) {
    sort_by_source(g);
    filter_edges(g, [&](std::size_t e) { return e == 0 || g.src[e] != g.src[e - 1] || g.dst[e] != g.dst[e - 1]; });
  }
  if (spec.add_self_loops) {
    for (std::int64_t v = 0; v < g.num_nodes; ++v) {
      g.src.push_back(static_cast<std::int32_t>(v));
      g.dst.push_back(static_cast<std::int32_t>(v));
      if (!g.edge_type.empty()) g.edge_type.push_back(0);
    }
  }
  switch (spec.order) {
    case EdgeOrder::as_generated:
      break;
    case EdgeOrder::sorted_by_destination:
      sort_by_destination(g);
      break;
    case EdgeOrder::shuffled: {
      auto engine = graph_engine(seed, stream::shuffle_edges);
      for (std::size_t e = g.src.size(); e > 1; --e) {
        const auto j = static_cast<std::size_t>(bounded(engine, e));
        std::swap(g.src[e - 1], g.src[j]);
        std::swap(g.dst[e - 1], g.dst[j]);
        if (!g.edge_type.empty()) std::swap(g.edge_type[e - 1], g.edge_type[j]);
      }
      break;
    }
  }
  if (spec.num_relations > 0) {
    auto engine = graph_engine(seed, stream::relation_types);
    g.num_relations = spec.num_relations;
    g.edge_type.resize(g.src.size());
    for (auto& t : g.edge_type) t = static_cast<std::int32_t>(bounded(engine, static_cast<std::uint64_t>(spec.num_relations)));
  }
}

}  // namespace tilesim::workloads::graphs
