#include "workloads/graphs/algorithms.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/cuthill_mckee_ordering.hpp>
#include <boost/property_map/property_map.hpp>
#include <metis.h>

#include "workloads/graphs/edge_options.hpp"

namespace tilesim::workloads::graphs {

namespace {

using Csr = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, boost::no_property,
                                               boost::no_property, std::uint32_t, std::uint32_t>;

// The undirected simple graph underneath, as a Boost CSR graph (each edge in both directions).
Csr undirected_csr(const EdgeList& graph) {
  EdgeList simple;
  simple.num_nodes = graph.num_nodes;
  simple.src = graph.src;
  simple.dst = graph.dst;
  GraphSpec clean;
  clean.remove_self_loops = true;
  clean.symmetrize = true;
  clean.deduplicate = true;
  apply_edge_options(simple, clean, 0);
  std::vector<std::uint32_t> sources(simple.src.begin(), simple.src.end());
  std::vector<std::uint32_t> targets(simple.dst.begin(), simple.dst.end());
  simple = EdgeList{};
  return Csr(boost::construct_inplace_from_sources_and_targets, sources, targets,
             static_cast<std::uint32_t>(graph.num_nodes));
}

DegreeStats stats_of(const std::vector<std::int32_t>& endpoint, std::int64_t num_nodes) {
  DegreeStats s;
  if (num_nodes == 0) return s;
  std::vector<std::int64_t> degree(static_cast<std::size_t>(num_nodes), 0);
  for (std::int32_t v : endpoint) ++degree[static_cast<std::size_t>(v)];
  s.min = *std::min_element(degree.begin(), degree.end());
  s.max = *std::max_element(degree.begin(), degree.end());
  double sum = 0, sum_sq = 0;
  for (std::int64_t d : degree) {
    sum += static_cast<double>(d);
    sum_sq += static_cast<double>(d) * static_cast<double>(d);
    s.zero_count += d == 0;
  }
  s.mean = sum / static_cast<double>(num_nodes);
  s.stddev = std::sqrt(std::max(0.0, sum_sq / static_cast<double>(num_nodes) - s.mean * s.mean));
  return s;
}

}  // namespace

nlohmann::json DegreeStats::to_json() const {
  return {{"min", min}, {"max", max}, {"mean", mean}, {"stddev", stddev}, {"zero_count", zero_count}};
}

DegreeStats in_degree_stats(const EdgeList& graph) { return stats_of(graph.dst, graph.num_nodes); }
DegreeStats out_degree_stats(const EdgeList& graph) { return stats_of(graph.src, graph.num_nodes); }

Labels reverse_cuthill_mckee(const EdgeList& graph) {
  const Csr csr = undirected_csr(graph);
  const auto n = static_cast<std::size_t>(graph.num_nodes);
  std::vector<std::uint32_t> node_at(n);  // node_at[new label] = node
  std::vector<boost::default_color_type> colour(n);
  auto index = boost::get(boost::vertex_index, csr);
  boost::cuthill_mckee_ordering(csr, node_at.rbegin(), boost::make_iterator_property_map(colour.begin(), index),
                                boost::make_out_degree_map(csr));
  Labels label(n);
  for (std::size_t i = 0; i < n; ++i) label[node_at[i]] = static_cast<std::int32_t>(i);
  return label;
}

std::int64_t bandwidth(const EdgeList& graph, const Labels& label_of_node) {
  std::int64_t widest = 0;
  for (std::size_t e = 0; e < graph.src.size(); ++e) {
    std::int64_t a = graph.src[e], b = graph.dst[e];
    if (!label_of_node.empty()) {
      a = label_of_node[static_cast<std::size_t>(a)];
      b = label_of_node[static_cast<std::size_t>(b)];
    }
    widest = std::max(widest, std::abs(a - b));
  }
  return widest;
}

EdgeList relabel(const EdgeList& graph, const Labels& label_of_node) {
  EdgeList out = graph;
  for (auto& v : out.src) v = label_of_node[static_cast<std::size_t>(v)];
  for (auto& v : out.dst) v = label_of_node[static_cast<std::size_t>(v)];
  for (std::size_t n = 0; n < graph.graph_of_node.size(); ++n)
    out.graph_of_node[static_cast<std::size_t>(label_of_node[n])] = graph.graph_of_node[n];
  return out;
}

std::vector<std::int32_t> metis_partition(const EdgeList& graph, std::int32_t num_parts, std::uint64_t seed) {
  const auto n = static_cast<std::size_t>(graph.num_nodes);
  std::vector<std::int32_t> part(n, 0);
  idx_t parts = std::min<idx_t>(num_parts, static_cast<idx_t>(n));
  if (parts <= 1) return part;
  const Csr csr = undirected_csr(graph);
  std::vector<idx_t> xadj(n + 1, 0), adjncy;
  adjncy.reserve(boost::num_edges(csr));
  for (std::size_t v = 0; v < n; ++v) {
    for (auto [it, end] = boost::adjacent_vertices(static_cast<std::uint32_t>(v), csr); it != end; ++it) {
      adjncy.push_back(static_cast<idx_t>(*it));
    }
    xadj[v + 1] = static_cast<idx_t>(adjncy.size());
  }
  idx_t nvtxs = static_cast<idx_t>(n), ncon = 1, objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_NUMBERING] = 0;
  options[METIS_OPTION_SEED] = static_cast<idx_t>(seed % 2147483647u);
  std::vector<idx_t> where(n, 0);
  // METIS reads an empty adjacency through its pointer, so give it one element.
  if (adjncy.empty()) adjncy.push_back(0);
  const int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), nullptr, nullptr, nullptr, &parts,
                                         nullptr, nullptr, options, &objval, where.data());
  if (status != METIS_OK) throw std::runtime_error("METIS_PartGraphKway failed with status " + std::to_string(status));
  for (std::size_t v = 0; v < n; ++v) part[v] = static_cast<std::int32_t>(where[v]);
  return part;
}

std::int64_t edges_cut(const EdgeList& graph, const std::vector<std::int32_t>& part_of_node) {
  std::int64_t cut = 0;
  for (std::size_t e = 0; e < graph.src.size(); ++e) {
    cut += part_of_node[static_cast<std::size_t>(graph.src[e])] != part_of_node[static_cast<std::size_t>(graph.dst[e])];
  }
  return cut;
}

}  // namespace tilesim::workloads::graphs
