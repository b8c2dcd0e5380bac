// The host-side mini-batch loaders (workloads/loaders/): neighbor sampling, Cluster-GCN batches, small-graph
// datasets and their collation, fixed-size padding and packing.
#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "workloads/graphs/generators.hpp"
#include "workloads/graphs/graph.hpp"
#include "workloads/loaders/batch_order.hpp"
#include "workloads/loaders/cluster_loader.hpp"
#include "workloads/loaders/fixed_size.hpp"
#include "workloads/loaders/graph_dataset.hpp"
#include "workloads/loaders/local_ids.hpp"
#include "workloads/loaders/neighbor_sampler.hpp"

using namespace tilesim::workloads;
using namespace tilesim::workloads::loaders;

namespace {

using Edge = std::pair<std::int32_t, std::int32_t>;

// 1000 nodes; node v has in-degree v % 37 from distinct sources (v + 1 + 17 j) mod 1000, no loops and no
// repeated edges, so distinct sampled edges are distinct sources. A relation type per edge (j % 3).
graphs::EdgeList varied_degree_graph() {
  graphs::EdgeList g;
  g.num_nodes = 1000;
  g.num_relations = 3;
  for (std::int32_t v = 0; v < 1000; ++v) {
    for (std::int32_t j = 0; j < v % 37; ++j) {
      g.src.push_back((v + 1 + 17 * j) % 1000);
      g.dst.push_back(v);
      g.edge_type.push_back(j % 3);
    }
  }
  return g;
}

std::set<Edge> edge_set(const graphs::EdgeList& g) {
  std::set<Edge> out;
  for (std::size_t e = 0; e < g.src.size(); ++e) out.emplace(g.src[e], g.dst[e]);
  return out;
}

std::vector<std::int64_t> in_degrees(const graphs::EdgeList& g) {
  std::vector<std::int64_t> d(static_cast<std::size_t>(g.num_nodes), 0);
  for (std::int32_t v : g.dst) ++d[static_cast<std::size_t>(v)];
  return d;
}

// Sampled in-edges per local destination, as global sources.
std::map<std::int32_t, std::vector<std::int32_t>> sources_by_destination(const Batch& b) {
  std::map<std::int32_t, std::vector<std::int32_t>> out;
  for (std::size_t e = 0; e < b.graph.src.size(); ++e) {
    out[b.graph.dst[e]].push_back(b.global_nodes[static_cast<std::size_t>(b.graph.src[e])]);
  }
  return out;
}

// The local nodes known after the first hop: the seeds and the sources of the edges into them (hop 1's
// edges come first and all end at a seed).
std::int32_t nodes_after_first_hop(const Batch& b) {
  std::int32_t n = static_cast<std::int32_t>(b.num_seed_nodes);
  for (std::size_t e = 0; e < b.graph.src.size() && b.graph.dst[e] < b.num_seed_nodes; ++e) {
    n = std::max(n, b.graph.src[e] + 1);
  }
  return n;
}

graphs::EdgeList random_graph(std::int64_t nodes, std::int64_t edges, std::uint64_t seed) {
  return graphs::erdos_renyi({nodes, edges, false}, seed);
}

DatasetSpec qm9_spec(std::int64_t num_graphs) {
  DatasetSpec s;
  s.kind = DatasetKind::qm9;
  s.num_graphs = num_graphs;
  return s;
}

// Graph g's edges in a collated batch, relative to its first node, in batch order.
std::vector<Edge> edges_of_local_graph(const Batch& b, std::int32_t position) {
  const auto& gon = b.graph.graph_of_node;
  const auto first = static_cast<std::int32_t>(std::find(gon.begin(), gon.end(), position) - gon.begin());
  std::vector<Edge> out;
  for (std::size_t e = 0; e < b.graph.src.size(); ++e) {
    if (gon[static_cast<std::size_t>(b.graph.dst[e])] == position) out.emplace_back(b.graph.src[e] - first, b.graph.dst[e] - first);
  }
  return out;
}

double padding_share(const GraphDataset& d, const std::vector<std::vector<std::int32_t>>& packs, const FixedSize& size) {
  std::int64_t real = 0;
  for (const auto& pack : packs) {
    for (std::int32_t g : pack) real += d.nodes_per_graph[static_cast<std::size_t>(g)];
  }
  return 1.0 - static_cast<double>(real) / static_cast<double>(size.num_nodes * static_cast<std::int64_t>(packs.size()));
}

}  // namespace

TEST_CASE("neighbor sampling keeps min(fanout, in-degree) distinct real in-edges of every frontier node", "[unit]") {
  const graphs::EdgeList g = varied_degree_graph();
  const NeighborIndex index = build_neighbor_index(g);
  const auto degree = in_degrees(g);
  const auto real = edge_set(g);
  std::vector<std::int32_t> all(1000);
  std::iota(all.begin(), all.end(), 0);
  const auto seeds = seed_batches(all, 64, true, 7, 0).front();
  const std::vector<std::int64_t> fanouts = {25, 10};
  const Batch b = sample_neighbors(index, seeds, fanouts, false, batch_seed(7, 0, 0));

  REQUIRE(b.num_seed_nodes == 64);
  REQUIRE(b.graph.num_nodes == static_cast<std::int64_t>(b.global_nodes.size()));
  CHECK(std::vector<std::int32_t>(b.global_nodes.begin(), b.global_nodes.begin() + 64) == seeds);
  CHECK(std::set<std::int32_t>(b.global_nodes.begin(), b.global_nodes.end()).size() == b.global_nodes.size());
  // Every sampled edge is an edge of the graph, with its relation type.
  for (std::size_t e = 0; e < b.graph.src.size(); ++e) {
    const std::int32_t s = b.global_nodes[static_cast<std::size_t>(b.graph.src[e])];
    const std::int32_t d = b.global_nodes[static_cast<std::size_t>(b.graph.dst[e])];
    REQUIRE(real.count({s, d}) == 1);
    const std::int32_t j = static_cast<std::int32_t>(((s - d - 1) % 1000 + 1000) % 1000 / 17);
    CHECK(b.graph.edge_type[e] == j % 3);
  }
  CHECK(b.graph.num_relations == 3);
  // Nodes are numbered in order of first appearance: a new source is always the next id.
  std::int32_t seen = 64;
  for (std::int32_t s : b.graph.src) {
    REQUIRE(s <= seen);
    if (s == seen) ++seen;
  }
  CHECK(seen == b.graph.num_nodes);
  // Hop 1 samples the seeds with fanout 25, hop 2 the nodes hop 1 found with fanout 10, none beyond.
  const std::int32_t hop1_end = nodes_after_first_hop(b);
  const auto sampled = sources_by_destination(b);
  for (std::int32_t local = 0; local < b.graph.num_nodes; ++local) {
    const std::int64_t d = degree[static_cast<std::size_t>(b.global_nodes[static_cast<std::size_t>(local)])];
    const std::int64_t expected = local < 64 ? std::min<std::int64_t>(25, d) : local < hop1_end ? std::min<std::int64_t>(10, d) : 0;
    const auto it = sampled.find(local);
    const std::vector<std::int32_t> sources = it == sampled.end() ? std::vector<std::int32_t>{} : it->second;
    INFO("local node " << local << ", in-degree " << d);
    CHECK(static_cast<std::int64_t>(sources.size()) == expected);
    CHECK(std::set<std::int32_t>(sources.begin(), sources.end()).size() == sources.size());
  }
}

TEST_CASE("neighbor sampling with replacement draws fanout edges, -1 takes all, large fanouts sample distinct edges", "[unit]") {
  // A star: node 0 has 500 in-edges, from 1..500; node 1 none.
  graphs::EdgeList star;
  star.num_nodes = 501;
  for (std::int32_t v = 1; v <= 500; ++v) {
    star.src.push_back(v);
    star.dst.push_back(0);
  }
  const NeighborIndex index = build_neighbor_index(star);
  CHECK(index.in_degree(0) == 500);
  CHECK(index.edge_types.empty());

  const Batch with_replacement = sample_neighbors(index, {0, 1}, {30}, true, 1);
  CHECK(with_replacement.graph.num_edges() == 30);  // node 1 has no in-edge to draw
  CHECK(std::all_of(with_replacement.graph.dst.begin(), with_replacement.graph.dst.end(), [](std::int32_t d) { return d == 0; }));
  // Draws with replacement exceed the in-degree when asked to.
  const Batch small = sample_neighbors(build_neighbor_index(varied_degree_graph()), {5}, {12}, true, 3);
  CHECK(small.graph.num_edges() == 12);

  const Batch all = sample_neighbors(index, {0}, {-1}, false, 1);
  CHECK(all.graph.num_edges() == 500);
  CHECK(all.graph.num_nodes == 501);

  // Above 64 picks the partial Fisher-Yates path: still distinct, still the asked count.
  for (std::int64_t fanout : {64, 65, 200, 499}) {
    const Batch b = sample_neighbors(index, {0}, {fanout}, false, static_cast<std::uint64_t>(fanout));
    INFO("fanout " << fanout);
    CHECK(b.graph.num_edges() == fanout);
    CHECK(b.graph.num_nodes == fanout + 1);
    const auto s = sources_by_destination(b)[0];
    CHECK(std::set<std::int32_t>(s.begin(), s.end()).size() == static_cast<std::size_t>(fanout));
  }
  // Fanout 0 samples nothing.
  CHECK(sample_neighbors(index, {0}, {0, 5}, false, 1).graph.num_edges() == 0);
}

TEST_CASE("neighbor batches and seed batches are deterministic in their seeds", "[unit]") {
  const NeighborIndex index = build_neighbor_index(varied_degree_graph());
  std::vector<std::int32_t> input(600);
  std::iota(input.begin(), input.end(), 100);

  const auto epoch0 = seed_batches(input, 128, true, 11, 0);
  CHECK(epoch0 == seed_batches(input, 128, true, 11, 0));
  CHECK(epoch0 != seed_batches(input, 128, true, 11, 1));
  CHECK(epoch0 != seed_batches(input, 128, true, 12, 0));
  REQUIRE(epoch0.size() == 5);
  CHECK(epoch0.back().size() == 600 - 4 * 128);
  std::vector<std::int32_t> flat;
  for (const auto& b : epoch0) flat.insert(flat.end(), b.begin(), b.end());
  CHECK(flat != input);
  std::sort(flat.begin(), flat.end());
  CHECK(flat == input);
  const auto in_order = seed_batches(input, 128, false, 11, 0);
  CHECK(std::vector<std::int32_t>(in_order[1].begin(), in_order[1].end()) ==
        std::vector<std::int32_t>(input.begin() + 128, input.begin() + 256));

  const Batch a = sample_neighbors(index, epoch0[0], {25, 10}, false, batch_seed(11, 0, 0));
  const Batch same = sample_neighbors(index, epoch0[0], {25, 10}, false, batch_seed(11, 0, 0));
  const Batch other = sample_neighbors(index, epoch0[0], {25, 10}, false, batch_seed(11, 0, 1));
  CHECK(a.global_nodes == same.global_nodes);
  CHECK(a.graph.src == same.graph.src);
  CHECK(a.graph.dst == same.graph.dst);
  CHECK((a.global_nodes != other.global_nodes || a.graph.src != other.graph.src));
  CHECK(batch_seed(11, 0, 1) != batch_seed(11, 1, 0));
}

TEST_CASE("sample_neighbors rejects seeds out of range, repeated seeds and fanouts below -1", "[unit]") {
  const NeighborIndex index = build_neighbor_index(varied_degree_graph());
  CHECK_THROWS_AS(sample_neighbors(index, {1000}, {5}, false, 1), std::invalid_argument);
  CHECK_THROWS_AS(sample_neighbors(index, {-1}, {5}, false, 1), std::invalid_argument);
  CHECK_THROWS_AS(sample_neighbors(index, {3, 4, 3}, {5}, false, 1), std::invalid_argument);
  CHECK_THROWS_AS(sample_neighbors(index, {3}, {-2}, false, 1), std::invalid_argument);
  CHECK_THROWS_AS(seed_batches({1, 2}, 0, false, 1, 0), std::invalid_argument);
  // A throw leaves the thread's relabelling table clean for the next batch.
  const Batch b = sample_neighbors(index, {3, 4}, {5}, false, 1);
  CHECK(b.global_nodes.front() == 3);
}

TEST_CASE("local ids number nodes by first appearance, and two tables can be alive at once", "[unit]") {
  LocalIds outer(100);
  CHECK(outer.add(42) == 0);
  CHECK(outer.add(7) == 1);
  CHECK(outer.add(42) == 0);
  {
    LocalIds inner(100);  // the thread's table is taken: a private one
    CHECK(inner.find(42) == LocalIds::absent);
    CHECK(inner.add(42) == 0);
  }
  CHECK(outer.find(7) == 1);
  CHECK(outer.take_nodes() == std::vector<std::int32_t>{42, 7});
  CHECK(outer.find(42) == LocalIds::absent);
}

TEST_CASE("METIS clusters partition the nodes, and cluster batches keep exactly the edges inside their parts", "[unit]") {
  graphs::EdgeList g = random_graph(3000, 24000, 5);
  g.num_relations = 2;
  for (std::size_t e = 0; e < g.src.size(); ++e) g.edge_type.push_back(static_cast<std::int32_t>(e % 2));
  const Clustering c = cluster_graph(g, 20, 3);
  REQUIRE(c.part_of_node.size() == 3000);
  REQUIRE(c.nodes_of_part.size() == 20);
  std::vector<int> times_seen(3000, 0);
  for (std::size_t p = 0; p < c.nodes_of_part.size(); ++p) {
    const auto& nodes = c.nodes_of_part[p];
    CHECK(std::is_sorted(nodes.begin(), nodes.end()));
    CHECK(!nodes.empty());
    for (std::int32_t v : nodes) {
      ++times_seen[static_cast<std::size_t>(v)];
      CHECK(c.part_of_node[static_cast<std::size_t>(v)] == static_cast<std::int32_t>(p));
    }
  }
  CHECK(std::all_of(times_seen.begin(), times_seen.end(), [](int t) { return t == 1; }));

  const NeighborIndex index = build_neighbor_index(g);
  const std::vector<std::int32_t> parts = {7, 2, 13};
  const Batch b = cluster_batch(index, c, parts);
  std::vector<std::int32_t> expected_nodes;
  for (std::int32_t p : parts) {
    expected_nodes.insert(expected_nodes.end(), c.nodes_of_part[static_cast<std::size_t>(p)].begin(),
                          c.nodes_of_part[static_cast<std::size_t>(p)].end());
  }
  CHECK(b.global_nodes == expected_nodes);
  CHECK(b.graph.num_nodes == static_cast<std::int64_t>(expected_nodes.size()));
  CHECK(b.num_seed_nodes == 0);
  const std::set<std::int32_t> chosen(parts.begin(), parts.end());
  std::multiset<std::tuple<std::int32_t, std::int32_t, std::int32_t>> expected, got;
  for (std::size_t e = 0; e < g.src.size(); ++e) {
    if (chosen.count(c.part_of_node[static_cast<std::size_t>(g.src[e])]) && chosen.count(c.part_of_node[static_cast<std::size_t>(g.dst[e])])) {
      expected.emplace(g.src[e], g.dst[e], g.edge_type[e]);
    }
  }
  for (std::size_t e = 0; e < b.graph.src.size(); ++e) {
    got.emplace(b.global_nodes[static_cast<std::size_t>(b.graph.src[e])], b.global_nodes[static_cast<std::size_t>(b.graph.dst[e])],
                b.graph.edge_type[e]);
  }
  CHECK(got == expected);
  CHECK(std::is_sorted(b.graph.dst.begin(), b.graph.dst.end()));
  // Edges between the chosen clusters are kept: some cross from one part to another.
  const std::int64_t first_part_size = static_cast<std::int64_t>(c.nodes_of_part[7].size());
  CHECK(std::any_of(b.graph.src.begin(), b.graph.src.end(), [&](std::int32_t s) { return s >= first_part_size; }));

  CHECK_THROWS_AS(cluster_batch(index, c, {20}), std::invalid_argument);
  CHECK_THROWS_AS(cluster_batch(index, c, {1, 1}), std::invalid_argument);
}

TEST_CASE("cluster batches are a permutation of the parts, cut into groups, deterministic in the seed", "[unit]") {
  const auto shuffled = cluster_batches(50, 8, true, 4, 2);
  REQUIRE(shuffled.size() == 7);
  CHECK(shuffled.back().size() == 2);
  std::vector<std::int32_t> flat;
  for (const auto& b : shuffled) flat.insert(flat.end(), b.begin(), b.end());
  std::vector<std::int32_t> sorted = flat;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int32_t> all(50);
  std::iota(all.begin(), all.end(), 0);
  CHECK(sorted == all);
  CHECK(flat != all);
  CHECK(shuffled == cluster_batches(50, 8, true, 4, 2));
  CHECK(shuffled != cluster_batches(50, 8, true, 5, 2));
  CHECK(shuffled != cluster_batches(50, 8, true, 4, 3));
  CHECK(cluster_batches(50, 8, false, 4, 2).front() == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_CASE("qm9-like, water and uniform datasets draw their graph sizes from their distributions", "[unit]") {
  const GraphDataset qm9 = make_dataset(qm9_spec(20000), 1);
  REQUIRE(qm9.num_graphs() == 20000);
  const auto [lo, hi] = std::minmax_element(qm9.nodes_per_graph.begin(), qm9.nodes_per_graph.end());
  CHECK(*lo >= 3);
  CHECK(*hi <= 29);
  const double mean = std::accumulate(qm9.nodes_per_graph.begin(), qm9.nodes_per_graph.end(), 0.0) / 20000.0;
  CHECK(mean == Approx(18.03).margin(0.1));  // the histogram's mean; s.d. 2.94 / sqrt(20000) = 0.02
  CHECK(qm9.edges_of(0) == qm9.nodes_per_graph[0] * (qm9.nodes_per_graph[0] - 1));
  CHECK(make_dataset(qm9_spec(100), 1).nodes_per_graph == make_dataset(qm9_spec(100), 1).nodes_per_graph);
  CHECK(make_dataset(qm9_spec(100), 1).nodes_per_graph != make_dataset(qm9_spec(100), 2).nodes_per_graph);

  DatasetSpec water;
  water.kind = DatasetKind::water;
  water.num_graphs = 5000;
  water.knn = true;
  water.k = 28;
  const GraphDataset w = make_dataset(water, 1);
  std::set<std::int32_t> sizes(w.nodes_per_graph.begin(), w.nodes_per_graph.end());
  CHECK(*sizes.begin() == 9);
  CHECK(*sizes.rbegin() == 90);
  CHECK(sizes.size() == 28);  // every n in 3..30 drawn
  CHECK(std::all_of(sizes.begin(), sizes.end(), [](std::int32_t n) { return n % 3 == 0; }));
  const auto small = static_cast<std::int32_t>(std::find(w.nodes_per_graph.begin(), w.nodes_per_graph.end(), 9) - w.nodes_per_graph.begin());
  CHECK(w.edges_of(small) == 9 * 8);  // k = 28 > n - 1: every other atom
  const auto big = static_cast<std::int32_t>(std::find(w.nodes_per_graph.begin(), w.nodes_per_graph.end(), 90) - w.nodes_per_graph.begin());
  CHECK(w.edges_of(big) == 90 * 28);

  DatasetSpec uniform;
  uniform.kind = DatasetKind::uniform;
  uniform.num_graphs = 5000;
  uniform.min_nodes = 2;
  uniform.max_nodes = 63;
  const GraphDataset u = make_dataset(uniform, 1);
  const std::set<std::int32_t> drawn(u.nodes_per_graph.begin(), u.nodes_per_graph.end());
  CHECK(*drawn.begin() == 2);
  CHECK(*drawn.rbegin() == 63);
  CHECK(drawn.size() == 62);  // every count in 2..63 drawn
  const double uniform_mean = std::accumulate(u.nodes_per_graph.begin(), u.nodes_per_graph.end(), 0.0) / 5000.0;
  CHECK(uniform_mean == Approx(32.5).margin(0.75));  // s.d. 17.9 / sqrt(5000) = 0.25
  DatasetSpec reversed = uniform;
  reversed.min_nodes = 64;
  CHECK_THROWS_AS(make_dataset(reversed, 1), std::invalid_argument);

  DatasetSpec bad = water;
  bad.k = 0;
  CHECK_THROWS_AS(make_dataset(bad, 1), std::invalid_argument);
  bad = water;
  bad.min_waters = 31;
  CHECK_THROWS_AS(make_dataset(bad, 1), std::invalid_argument);
}

TEST_CASE("collate lays graphs out block-diagonally, and a graph is the same in every batch", "[unit]") {
  DatasetSpec spec = qm9_spec(200);
  for (bool knn : {false, true}) {
    spec.knn = knn;
    spec.k = 6;
    const GraphDataset d = make_dataset(spec, 9);
    const std::vector<std::int32_t> ids_a = {17, 3, 150, 42};
    const std::vector<std::int32_t> ids_b = {42, 99, 17};
    const Batch a = collate(d, ids_a);
    const Batch b = collate(d, ids_b);
    INFO("knn " << knn);
    CHECK(a.graph_ids == ids_a);
    CHECK(a.global_nodes.empty());
    CHECK(a.num_seed_nodes == 0);
    CHECK(a.graph.num_graphs == 4);
    std::int64_t nodes = 0, edges = 0;
    for (std::size_t i = 0; i < ids_a.size(); ++i) {
      const std::int32_t n = d.nodes_per_graph[static_cast<std::size_t>(ids_a[i])];
      for (std::int32_t v = 0; v < n; ++v) CHECK(a.graph.graph_of_node[static_cast<std::size_t>(nodes + v)] == static_cast<std::int32_t>(i));
      nodes += n;
      edges += d.edges_of(ids_a[i]);
    }
    CHECK(a.graph.num_nodes == nodes);
    CHECK(a.graph.num_edges() == edges);
    // Block-diagonal: both ends of every edge in one graph; no loops; ordered by destination.
    for (std::size_t e = 0; e < a.graph.src.size(); ++e) {
      CHECK(a.graph.graph_of_node[static_cast<std::size_t>(a.graph.src[e])] ==
            a.graph.graph_of_node[static_cast<std::size_t>(a.graph.dst[e])]);
      CHECK(a.graph.src[e] != a.graph.dst[e]);
    }
    CHECK(std::is_sorted(a.graph.dst.begin(), a.graph.dst.end()));
    // Dataset graph 17 and 42 are identical wherever they land.
    CHECK(edges_of_local_graph(a, 0) == edges_of_local_graph(b, 2));
    CHECK(edges_of_local_graph(a, 3) == edges_of_local_graph(b, 0));
    // kNN edges depend on the atoms' positions: graphs of one size still differ.
    if (knn) CHECK(edges_of_local_graph(a, 0) != edges_of_local_graph(a, 1));
  }
  CHECK_THROWS_AS(collate(make_dataset(qm9_spec(5), 1), {5}), std::invalid_argument);
  // Epoch order over the dataset.
  const auto epoch = graph_batches(200, 64, true, 3, 0);
  CHECK(epoch.size() == 4);
  CHECK(epoch == graph_batches(200, 64, true, 3, 0));
  CHECK(epoch != graph_batches(200, 64, true, 3, 1));
  CHECK(graph_batches(200, 64, false, 3, 0)[3] == std::vector<std::int32_t>{192, 193, 194, 195, 196, 197, 198, 199});
}

TEST_CASE("pad_to_fixed_size pads to the exact size with padding edges on padding nodes only", "[unit]") {
  const GraphDataset d = make_dataset(qm9_spec(50), 4);
  const std::vector<std::int32_t> ids = {1, 2, 3, 4, 5};
  Batch b = collate(d, ids);
  const graphs::EdgeList real = b.graph;
  const FixedSize size{real.num_nodes + 10, real.num_edges() + 23, 8};
  const Padding p = pad_to_fixed_size(b, size);
  CHECK(p.real_nodes == real.num_nodes);
  CHECK(p.real_edges == real.num_edges());
  CHECK(p.real_graphs == 5);
  CHECK(p.pad_nodes == 10);
  CHECK(p.pad_edges == 23);
  CHECK(p.pad_graphs == 3);
  CHECK(b.graph.num_nodes == size.num_nodes);
  CHECK(b.graph.num_edges() == size.num_edges);
  CHECK(b.graph.num_graphs == 8);
  CHECK(b.graph.graph_of_node.size() == static_cast<std::size_t>(size.num_nodes));
  CHECK(b.graph_ids == ids);
  // The real part is untouched and comes first.
  CHECK(std::equal(real.src.begin(), real.src.end(), b.graph.src.begin()));
  CHECK(std::equal(real.graph_of_node.begin(), real.graph_of_node.end(), b.graph.graph_of_node.begin()));
  // Padding graphs 5, 6, 7 get 4, 3, 3 nodes and 8, 8, 7 edges, each a self-loop on its graph's first node.
  std::map<std::int32_t, std::int64_t> nodes_per_pad_graph;
  for (auto v = static_cast<std::size_t>(real.num_nodes); v < b.graph.graph_of_node.size(); ++v) ++nodes_per_pad_graph[b.graph.graph_of_node[v]];
  CHECK(nodes_per_pad_graph == std::map<std::int32_t, std::int64_t>{{5, 4}, {6, 3}, {7, 3}});
  std::map<std::int32_t, std::int64_t> edges_per_pad_node;
  for (auto e = static_cast<std::size_t>(real.num_edges()); e < b.graph.src.size(); ++e) {
    CHECK(b.graph.src[e] >= real.num_nodes);
    CHECK(b.graph.dst[e] == b.graph.src[e]);
    ++edges_per_pad_node[b.graph.src[e]];
  }
  const auto first = static_cast<std::int32_t>(real.num_nodes);
  CHECK(edges_per_pad_node == std::map<std::int32_t, std::int64_t>{{first, 8}, {first + 4, 8}, {first + 7, 7}});

  // A node batch: one padding graph's worth of nodes, its edges on the first padding node, types kept parallel.
  const NeighborIndex index = build_neighbor_index(varied_degree_graph());
  Batch nb = sample_neighbors(index, {10, 20, 30}, {4, 4}, false, 2);
  const std::int64_t nodes = nb.graph.num_nodes, edges = nb.graph.num_edges();
  const Padding np = pad_to_fixed_size(nb, {nodes + 5, edges + 9, 0});
  CHECK(np.pad_graphs == 0);
  CHECK(nb.graph.num_nodes == nodes + 5);
  CHECK(nb.graph.edge_type.size() == nb.graph.src.size());
  CHECK(nb.global_nodes.size() == static_cast<std::size_t>(nodes));
  for (auto e = static_cast<std::size_t>(edges); e < nb.graph.src.size(); ++e) {
    CHECK(nb.graph.src[e] == nodes);
    CHECK(nb.graph.dst[e] == nodes);
  }
}

TEST_CASE("pad_to_fixed_size throws, leaving the batch as it was, when the batch does not fit", "[unit]") {
  const GraphDataset d = make_dataset(qm9_spec(10), 4);
  const Batch b = collate(d, {0, 1, 2});
  const std::int64_t n = b.graph.num_nodes, e = b.graph.num_edges();
  auto throws = [&](const FixedSize& size) {
    Batch copy = b;
    CHECK_THROWS_AS(pad_to_fixed_size(copy, size), std::invalid_argument);
    CHECK(copy.graph.num_nodes == n);
    CHECK(copy.graph.num_edges() == e);
  };
  throws({n - 1, e + 5, 4});   // too many nodes
  throws({n + 5, e - 1, 4});   // too many edges
  throws({n + 5, e + 5, 2});   // too many graphs
  throws({n + 5, e + 5, 3});   // padding but no padding graph left
  throws({n, e + 5, 4});       // padding edges, no padding node
  throws({n + 2, e + 5, 6});   // three padding graphs, two padding nodes
  throws({n + 5, e + 5, 0});   // graph batch without a graph count
  Batch exact = b;
  CHECK(pad_to_fixed_size(exact, {n, e, 3}).pad_graphs == 0);  // nothing to pad: fits as it is
  Batch nodes_only = b;
  CHECK(pad_to_fixed_size(nodes_only, {n + 4, e, 4}).pad_edges == 0);

  const NeighborIndex index = build_neighbor_index(varied_degree_graph());
  Batch nb = sample_neighbors(index, {10, 20}, {4}, false, 2);
  const FixedSize no_pad_node{nb.graph.num_nodes, nb.graph.num_edges() + 1, 0};
  CHECK_THROWS_AS(pad_to_fixed_size(nb, no_pad_node), std::invalid_argument);
  CHECK_THROWS_AS(pad_to_fixed_size(nb, {nb.graph.num_nodes + 1, nb.graph.num_edges() + 1, 2}), std::invalid_argument);
}

TEST_CASE("lpfhp and stream packs fit their fixed size, hold every graph once, and lpfhp needs no more packs", "[unit]") {
  // About 14 molecules a pack, edges never binding (28 = the largest molecule's edges per atom) and a
  // spare graph slot or two: where longest-first pays. With a tight graph count or edge budget the
  // sorted order leaves the small graphs to the last packs and stream can pack tighter (bench/sampler_bench.cpp).
  const GraphDataset d = make_dataset(qm9_spec(4000), 21);
  const FixedSize size{256, 256 * 28, 24};
  const auto order = graph_batches(d.num_graphs(), d.num_graphs(), true, 21, 0).front();
  const auto lpfhp = pack_lpfhp(d, order, size);
  const auto stream = pack_stream(d, order, size);
  for (const auto* packs : {&lpfhp, &stream}) {
    std::vector<int> seen(4000, 0);
    for (const auto& pack : *packs) {
      std::int64_t nodes = 0, edges = 0;
      for (std::int32_t g : pack) {
        ++seen[static_cast<std::size_t>(g)];
        nodes += d.nodes_per_graph[static_cast<std::size_t>(g)];
        edges += d.edges_of(g);
      }
      REQUIRE(!pack.empty());
      CHECK(nodes <= size.num_nodes - 1);
      CHECK(edges <= size.num_edges - 1);
      CHECK(static_cast<std::int64_t>(pack.size()) <= size.num_graphs - 1);
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
  }
  // Stream keeps the given order.
  std::vector<std::int32_t> flat;
  for (const auto& pack : stream) flat.insert(flat.end(), pack.begin(), pack.end());
  CHECK(flat == order);
  INFO("lpfhp " << lpfhp.size() << " packs, " << 100 * padding_share(d, lpfhp, size) << "% padding nodes; stream "
                << stream.size() << " packs, " << 100 * padding_share(d, stream, size) << "% padding nodes");
  CHECK(lpfhp.size() <= stream.size());
  CHECK(padding_share(d, lpfhp, size) < padding_share(d, stream, size));
  // Every pack pads: the packers leave room for the padding graph and its nodes and edges.
  for (std::size_t i = 0; i < lpfhp.size(); i += 17) {
    Batch b = collate(d, lpfhp[i]);
    CHECK_NOTHROW(pad_to_fixed_size(b, size));
  }
  Batch last = collate(d, stream.back());
  CHECK_NOTHROW(pad_to_fixed_size(last, size));
  CHECK(pack_lpfhp(d, order, size) == lpfhp);
}

TEST_CASE("packing rejects a graph that cannot fit a pack alone", "[unit]") {
  const GraphDataset d = make_dataset(qm9_spec(100), 2);
  const auto biggest = static_cast<std::int32_t>(std::max_element(d.nodes_per_graph.begin(), d.nodes_per_graph.end()) -
                                                 d.nodes_per_graph.begin());
  const std::int64_t n = d.nodes_per_graph[static_cast<std::size_t>(biggest)];
  const FixedSize too_few_nodes{n, 100000, 2};  // n - 1 nodes for real graphs
  CHECK_THROWS_AS(pack_lpfhp(d, {biggest}, too_few_nodes), std::invalid_argument);
  CHECK_THROWS_AS(pack_stream(d, {biggest}, too_few_nodes), std::invalid_argument);
  CHECK_THROWS_AS(pack_stream(d, {0}, FixedSize{1000, 100000, 1}), std::invalid_argument);
  CHECK(pack_stream(d, {biggest}, FixedSize{n + 1, n * (n - 1) + 1, 2}).size() == 1);
}
