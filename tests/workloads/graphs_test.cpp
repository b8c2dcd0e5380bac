// Graph sources (generators, presets, loaders), the PyG-style edge options, the "graph" object's
// parsing, and the orderings and partitions (workloads/graphs/).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "workloads/graphs/algorithms.hpp"
#include "workloads/graphs/edge_options.hpp"
#include "workloads/graphs/generators.hpp"
#include "workloads/graphs/graph.hpp"
#include "workloads/graphs/graph_random.hpp"
#include "workloads/graphs/loaders.hpp"
#include "tests/support/test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace tilesim;
using namespace tilesim::workloads::graphs;
using Catch::Matchers::Contains;

namespace {

using GraphTempDir = tilesim_test::TempDir;
using tilesim_test::required_input_error_of;

EdgeList build_json(const json& object, std::uint64_t seed = 1, const std::string& file = "w.json") {
  return build(parse_graph_spec(object, file, "graph"), seed);
}

std::string spec_error(const json& object) {
  return required_input_error_of([&] { parse_graph_spec(object, "w.json", "graph"); });
}

bool ids_in_range(const EdgeList& g) {
  auto ok = [&](std::int32_t v) { return v >= 0 && v < g.num_nodes; };
  return std::all_of(g.src.begin(), g.src.end(), ok) && std::all_of(g.dst.begin(), g.dst.end(), ok);
}

std::multiset<std::pair<std::int32_t, std::int32_t>> edge_multiset(const EdgeList& g) {
  std::multiset<std::pair<std::int32_t, std::int32_t>> out;
  for (std::size_t e = 0; e < g.src.size(); ++e) out.emplace(g.src[e], g.dst[e]);
  return out;
}

// Degree (in + out) of every node.
std::vector<std::int64_t> total_degrees(const EdgeList& g) {
  std::vector<std::int64_t> d(static_cast<std::size_t>(g.num_nodes), 0);
  for (std::size_t e = 0; e < g.src.size(); ++e) {
    ++d[static_cast<std::size_t>(g.src[e])];
    ++d[static_cast<std::size_t>(g.dst[e])];
  }
  return d;
}

EdgeList from_pairs(std::int64_t n, const std::vector<std::pair<int, int>>& pairs) {
  EdgeList g;
  g.num_nodes = n;
  for (auto [s, d] : pairs) {
    g.src.push_back(s);
    g.dst.push_back(d);
  }
  return g;
}

}  // namespace

TEST_CASE("Erdos-Renyi graphs have the requested size, are deterministic in the seed and have Poisson degrees", "[graphs][unit]") {
  const json spec = {{"generator", "erdos_renyi"}, {"num_nodes", 2000}, {"num_edges", 20000}};
  const EdgeList a = build_json(spec, 5), b = build_json(spec, 5), c = build_json(spec, 6);
  CHECK(a.num_nodes == 2000);
  CHECK(a.num_edges() == 20000);
  CHECK(ids_in_range(a));
  CHECK(a.src == b.src);
  CHECK(a.dst == b.dst);
  CHECK(a.src != c.src);
  // Uniform endpoints: in-degree ~ Binomial(E, 1/N), close to Poisson(10): variance near the mean, no hubs.
  const DegreeStats in = in_degree_stats(a);
  CHECK(in.mean == Approx(10.0));
  CHECK(in.stddev * in.stddev == Approx(10.0).epsilon(0.2));
  CHECK(in.max < 40);
}

TEST_CASE("R-MAT graphs are heavy-tailed: the largest degree is far above the mean", "[graphs][unit]") {
  const EdgeList g = build_json({{"generator", "rmat"}, {"scale", 12}, {"edge_factor", 8}}, 3);
  CHECK(g.num_nodes == 4096);
  CHECK(g.num_edges() == 4096 * 8);
  CHECK(ids_in_range(g));
  const auto d = total_degrees(g);
  const double mean = 2.0 * static_cast<double>(g.num_edges()) / static_cast<double>(g.num_nodes);
  CHECK(static_cast<double>(*std::max_element(d.begin(), d.end())) > 10 * mean);
  // Same size as Erdos-Renyi, far more skewed.
  const EdgeList er = build_json({{"generator", "erdos_renyi"}, {"num_nodes", 4096}, {"num_edges", 4096 * 8}}, 3);
  CHECK(in_degree_stats(g).stddev > 4 * in_degree_stats(er).stddev);
}

TEST_CASE("PLOD takes an average degree and gives a power-law degree sequence", "[graphs][unit]") {
  const GraphSpec spec = parse_graph_spec({{"generator", "plod"}, {"num_nodes", 5000}, {"alpha", 2.0}, {"average_degree", 6}},
                                          "w.json", "graph");
  CHECK(spec.source["beta"].get<double>() > 0);
  const EdgeList g = build(spec, 2);
  CHECK(ids_in_range(g));
  // Each undirected edge once: the average degree counts both ends.
  const double average = 2.0 * static_cast<double>(g.num_edges()) / 5000.0;
  CHECK(average == Approx(6.0).epsilon(0.25));
  const auto d = total_degrees(g);
  CHECK(static_cast<double>(*std::max_element(d.begin(), d.end())) > 10 * average);
}

TEST_CASE("PLOD's expected average degree is the mean over every draw, in bounded time for the largest graphs", "[graphs][unit]") {
  // The mean of PLOD's degree over the n draws, one term per draw, as plod_average_degree defines it.
  auto every_draw = [](std::int64_t n, double alpha, double beta) {
    double sum = 1;  // draw 0: degree 1
    for (std::int64_t x = 1; x < n; ++x)
      sum += std::clamp(std::floor(beta * std::pow(static_cast<double>(x), -alpha)), 1.0, static_cast<double>(n - 1));
    return sum / static_cast<double>(n);
  };
  // Summed by runs of equal degree, the same to the last bit.
  for (const std::int64_t n : {2, 3, 100, 5000, 200000})
    for (const double alpha : {0.01, 0.5, 1.0, 2.0, 3.0})
      for (const double beta : {0.5, 2.0, 100.0, 1e4}) {
        INFO("n " << n << ", alpha " << alpha << ", beta " << beta);
        CHECK(plod_average_degree(n, alpha, beta) == every_draw(n, alpha, beta));
      }
  // Where the runs are many, the tail is estimated: still within 2e-5.
  CHECK(plod_average_degree(2000000, 1.0, 1e9) == Approx(every_draw(2000000, 1.0, 1e9)).epsilon(2e-5));
  // The largest graphs a workload may ask for are refused for their edge count at once (the sum took
  // 2^31 steps per call, minutes, and the average_degree search makes a hundred calls).
  CHECK_THAT(required_input_error_of([] {
               parse_graph_spec({{"generator", "plod"}, {"num_nodes", 2147483647}, {"alpha", 0.001}, {"beta", 1e15}},
                                "w.json", "graph");
             }),
             Contains("graph.beta") && Contains("edges"));
  CHECK_THAT(required_input_error_of([] {
               parse_graph_spec({{"generator", "plod"}, {"num_nodes", 2147483647}, {"alpha", 1.0}, {"average_degree", 1e6}},
                                "w.json", "graph");
             }),
             Contains("graph.beta") && Contains("edges"));
}

TEST_CASE("PLOD's beta for an average degree is one a workload may state, so the echo reads back", "[graphs][unit]") {
  // Average degree 1: every beta up to 1 gives it; the search ended on 2^-60, below the least beta a
  // workload may state (found by fuzzing the workload reader's echo).
  const GraphSpec least = parse_graph_spec({{"generator", "plod"}, {"num_nodes", 1086}, {"alpha", 2.0}, {"average_degree", 1}},
                                           "w.json", "graph");
  CHECK(least.source["beta"] == 1.0);
  CHECK(to_json(parse_graph_spec(to_json(least), "w.json", "graph")) == to_json(least));
  // An average degree PLOD does not reach with beta up to 1e15 is refused, not given a larger beta.
  CHECK_THAT(required_input_error_of([] {
               parse_graph_spec({{"generator", "plod"}, {"num_nodes", 1000}, {"alpha", 100.0}, {"average_degree", 999}},
                                "w.json", "graph");
             }),
             Contains("w.json: graph.average_degree: expected an average degree PLOD reaches with beta at most 1e15") &&
                 Contains("found 999"));
}

TEST_CASE("Small-world graphs are a ring lattice of k neighbours, rewired with the given probability", "[graphs][unit]") {
  const EdgeList ring = build_json({{"generator", "small_world"}, {"num_nodes", 100}, {"k", 4}, {"rewire_probability", 0.0}});
  CHECK(ring.num_edges() == 200);  // N k / 2 undirected edges, each once
  for (std::size_t e = 0; e < ring.src.size(); ++e) {
    const int gap = std::abs(ring.src[e] - ring.dst[e]);
    CHECK(std::min(gap, 100 - gap) <= 2);
  }
  const EdgeList rewired = build_json({{"generator", "small_world"}, {"num_nodes", 100}, {"k", 4}, {"rewire_probability", 0.5}});
  std::int64_t long_range = 0;
  for (std::size_t e = 0; e < rewired.src.size(); ++e) {
    const int gap = std::abs(rewired.src[e] - rewired.dst[e]);
    long_range += std::min(gap, 100 - gap) > 2;
  }
  CHECK(long_range > 40);
  CHECK(long_range < 160);
}

TEST_CASE("Molecule batches are block-diagonal complete or k-nearest-neighbour graphs of 10 to 30 nodes", "[graphs][unit]") {
  const EdgeList complete = build_json({{"generator", "molecules"}, {"num_graphs", 6}});
  // Every node of a complete molecule of n nodes has n - 1 in-neighbours, all within its molecule.
  const DegreeStats in = in_degree_stats(complete);
  CHECK(in.min >= 9);
  CHECK(in.max <= 29);
  CHECK(complete.num_nodes >= 60);
  CHECK(complete.num_nodes <= 180);
  std::int64_t expected_edges = 0;
  std::vector<std::int64_t> in_degree(static_cast<std::size_t>(complete.num_nodes), 0);
  for (std::int32_t d : complete.dst) ++in_degree[static_cast<std::size_t>(d)];
  for (std::int64_t v = 0; v < complete.num_nodes;) {  // molecules are contiguous: n nodes of in-degree n - 1
    const std::int64_t n = in_degree[static_cast<std::size_t>(v)] + 1;
    for (std::int64_t k = 0; k < n; ++k) CHECK(in_degree[static_cast<std::size_t>(v + k)] == n - 1);
    expected_edges += n * (n - 1);
    v += n;
  }
  CHECK(complete.num_edges() == expected_edges);
  for (std::size_t e = 0; e < complete.src.size(); ++e) CHECK(std::abs(complete.src[e] - complete.dst[e]) < 30);
  // The batch vector (PyG's `batch`): one graph id per node, non-decreasing over the contiguous
  // molecules, and every edge inside one molecule.
  REQUIRE(complete.num_graphs == 6);
  REQUIRE(static_cast<std::int64_t>(complete.graph_of_node.size()) == complete.num_nodes);
  CHECK(complete.graph_of_node.front() == 0);
  CHECK(complete.graph_of_node.back() == 5);
  for (std::size_t n = 1; n < complete.graph_of_node.size(); ++n) {
    const std::int32_t step = complete.graph_of_node[n] - complete.graph_of_node[n - 1];
    CHECK((step == 0 || step == 1));
  }
  for (std::size_t e = 0; e < complete.src.size(); ++e)
    CHECK(complete.graph_of_node[static_cast<std::size_t>(complete.src[e])] ==
          complete.graph_of_node[static_cast<std::size_t>(complete.dst[e])]);

  const EdgeList knn = build_json({{"generator", "molecules"}, {"num_graphs", 4}, {"connectivity", "knn"}, {"k", 5}});
  const DegreeStats k_in = in_degree_stats(knn);
  CHECK(k_in.min == 5);
  CHECK(k_in.max == 5);
  CHECK(knn.num_edges() == 5 * knn.num_nodes);
  for (std::size_t e = 0; e < knn.src.size(); ++e) CHECK(knn.src[e] != knn.dst[e]);
}

TEST_CASE("Dataset presets match the node, edge and feature counts of workloads.md", "[graphs][unit]") {
  const GraphSpec cora = parse_graph_spec({{"preset", "cora"}}, "w.json", "graph");
  CHECK(cora.num_features == 1433);
  const EdgeList g = build(cora, 1);
  CHECK(g.num_nodes == 2708);
  CHECK(g.num_edges() == 10556);
  CHECK(ids_in_range(g));
  // Stored both ways, like PyG's undirected datasets.
  CHECK(edge_multiset(g) == edge_multiset(from_pairs(g.num_nodes, [&] {
          std::vector<std::pair<int, int>> reversed;
          for (std::size_t e = 0; e < g.src.size(); ++e) reversed.emplace_back(g.dst[e], g.src[e]);
          return reversed;
        }())));
  // Heavy-tailed with Cora's small maximum (about 168).
  const DegreeStats in = in_degree_stats(g);
  CHECK(in.max > 84);
  CHECK(in.max < 336);
  CHECK(in.stddev > in.mean);

  const GraphSpec qm9 = parse_graph_spec({{"preset", "qm9"}, {"num_graphs", 10}, {"num_features", 32}}, "w.json", "graph");
  CHECK(qm9.num_features == 32);
  const EdgeList batch = build(qm9, 1);
  CHECK(batch.num_nodes >= 10 * 7);
  CHECK(batch.num_nodes <= 10 * 29);

  CHECK_THAT(spec_error({{"preset", "corra"}}), Contains("graph.preset") && Contains("cora") && Contains("ogbn-arxiv"));
  CHECK_THAT(spec_error({{"preset", "cora"}, {"num_graphs", 3}}), Contains("graph.num_graphs"));
}

TEST_CASE("Edge lists load with comments, remap ids by first appearance and name the file and line of a bad line", "[graphs][unit]") {
  GraphTempDir dir;
  const std::string good = dir.write("g.txt", "# a comment\n\n100 7\n7 100\n  42\t100\n% also a comment\n");
  const EdgeList g = load_edge_list(good);
  CHECK(g.num_nodes == 3);
  CHECK(g.src == std::vector<std::int32_t>{0, 1, 2});
  CHECK(g.dst == std::vector<std::int32_t>{1, 0, 0});

  const std::string three = dir.write("three.txt", "1 2\n# ok\n1 2 3\n");
  CHECK_THAT(required_input_error_of([&] { load_edge_list(three); }), Contains(three + ":3") && Contains("two integers"));
  const std::string word = dir.write("word.txt", "1 x\n");
  CHECK_THAT(required_input_error_of([&] { load_edge_list(word); }), Contains(word + ":1") && Contains("\"1 x\""));
  const std::string negative = dir.write("neg.txt", "1 2\n-1 2\n");
  CHECK_THAT(required_input_error_of([&] { load_edge_list(negative); }), Contains(negative + ":2") && Contains("non-negative"));
  CHECK_THAT(required_input_error_of([&] { load_edge_list(dir.write("none", "") + ".missing"); }), Contains("cannot be read"));
}

TEST_CASE("The shipped Cora edge list gives PyG's Cora after symmetrising and deduplicating", "[graphs][unit]") {
  const std::string workload = std::string(TILESIM_SOURCE_DIR) + "/workloads/examples/x.json";
  const EdgeList g = build_json({{"file", "../data/cora/cora.cites"}, {"symmetrize", true}, {"deduplicate", true}}, 1, workload);
  CHECK(g.num_nodes == 2708);   // workloads.md section 4
  CHECK(g.num_edges() == 10556);
  CHECK(in_degree_stats(g).min >= 1);  // every paper cites or is cited
}

TEST_CASE("Matrix Market files load (pattern, real, general, symmetric) and bad ones name the line", "[graphs][unit]") {
  GraphTempDir dir;
  const EdgeList general = load_matrix_market(
      dir.write("a.mtx", "%%MatrixMarket matrix coordinate real general\n% comment\n4 4 3\n1 2 0.5\n2 3 1e3\n4 4 -1\n"));
  CHECK(general.num_nodes == 4);
  CHECK(general.src == std::vector<std::int32_t>{0, 1, 3});
  CHECK(general.dst == std::vector<std::int32_t>{1, 2, 3});
  const EdgeList symmetric =
      load_matrix_market(dir.write("s.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n5 5 2\n2 1\n3 3\n"));
  CHECK(symmetric.num_nodes == 5);  // isolated nodes 3 and 4 (0-based) kept
  CHECK(symmetric.src == std::vector<std::int32_t>{1, 0, 2});
  CHECK(symmetric.dst == std::vector<std::int32_t>{0, 1, 2});

  auto error_of = [&](const std::string& name, const std::string& text) {
    const std::string path = dir.write(name, text);
    return std::make_pair(path, required_input_error_of([&] { load_matrix_market(path); }));
  };
  auto [p1, e1] = error_of("h.mtx", "%%MatrixMarket matrix array real general\n2 2\n");
  CHECK_THAT(e1, Contains(p1 + ":1") && Contains("coordinate"));
  auto [p2, e2] = error_of("sq.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 3 1\n1 1\n");
  CHECK_THAT(e2, Contains(p2 + ":2") && Contains("square"));
  auto [p3, e3] = error_of("r.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 1\n3 1\n");
  CHECK_THAT(e3, Contains(p3 + ":4") && Contains("[1, 2]"));
  auto [p4, e4] = error_of("few.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 3\n1 1\n");
  CHECK_THAT(e4, Contains(p4 + ":3 (end of file)") && Contains("3 entries"));
  auto [p5, e5] = error_of("many.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n2 2\n");
  CHECK_THAT(e5, Contains(p5 + ":4") && Contains("another entry"));
  auto [p6, e6] = error_of("val.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n");
  CHECK_THAT(e6, Contains(p6 + ":3") && Contains("ROW COL VALUE"));
}

TEST_CASE("METIS graph files load with weights skipped and bad ones name the line", "[graphs][unit]") {
  GraphTempDir dir;
  // A path 1-2-3 and an isolated vertex 4; FMT 011 (vertex and edge weights).
  const EdgeList g = load_metis(dir.write("p.graph", "% path\n4 2 011\n5 2 7\n1 1 9 3 8\n2 2 8\n3\n"));
  CHECK(g.num_nodes == 4);
  CHECK(g.src == std::vector<std::int32_t>{0, 1, 1, 2});
  CHECK(g.dst == std::vector<std::int32_t>{1, 0, 2, 1});
  const EdgeList plain = load_metis(dir.write("q.graph", "3 1\n2\n1\n\n"));
  CHECK(plain.num_edges() == 2);

  auto error_of = [&](const std::string& name, const std::string& text) {
    const std::string path = dir.write(name, text);
    return std::make_pair(path, required_input_error_of([&] { load_metis(path); }));
  };
  auto [p1, e1] = error_of("range.graph", "2 1\n3\n1\n");
  CHECK_THAT(e1, Contains(p1 + ":2") && Contains("[1, 2]"));
  auto [p2, e2] = error_of("count.graph", "3 1\n2 3\n1\n1\n");
  CHECK_THAT(e2, Contains(p2 + ":") && Contains("2 x M = 2"));
  auto [p3, e3] = error_of("lines.graph", "3 1\n2\n1\n");
  CHECK_THAT(e3, Contains(p3 + ":3 (end of file)") && Contains("3 vertex lines"));
  auto [p4, e4] = error_of("head.graph", "3\n");
  CHECK_THAT(e4, Contains(p4 + ":1") && Contains("N M"));
  auto [p5, e5] = error_of("fmt.graph", "2 1 2\n2\n1\n");
  CHECK_THAT(e5, Contains(p5 + ":1") && Contains("FMT"));
  // An edge count past int32 is refused at the header (found by fuzzing: it sized the edge arrays).
  auto [p6, e6] = error_of("huge.graph", "2 5555555555555555");
  CHECK_THAT(e6, Contains(p6 + ":1") && Contains("at most 1073741823 edges") && Contains("5555555555555555"));
  // A header that promises many edges over a short file is an error of counts, not an allocation.
  auto [p7, e7] = error_of("short.graph", "2 1073741823\n2\n1\n");
  CHECK_THAT(e7, Contains(p7 + ":3 (end of file)") && Contains("2 x M = 2147483646"));
}

TEST_CASE("Edge options: self-loops, symmetrise, deduplicate, order and relation types", "[graphs][unit]") {
  const EdgeList base = from_pairs(4, {{0, 1}, {2, 2}, {0, 1}, {3, 0}, {1, 0}});
  GraphSpec spec;

  EdgeList g = base;
  spec.remove_self_loops = true;
  apply_edge_options(g, spec, 1);
  CHECK(edge_multiset(g) == edge_multiset(from_pairs(4, {{0, 1}, {0, 1}, {3, 0}, {1, 0}})));

  g = base;
  spec = GraphSpec{};
  spec.symmetrize = true;  // loops are not doubled
  apply_edge_options(g, spec, 1);
  CHECK(g.num_edges() == 9);
  CHECK(edge_multiset(g).count({0, 3}) == 1);
  CHECK(edge_multiset(g).count({2, 2}) == 1);

  g = base;
  spec = GraphSpec{};
  spec.deduplicate = true;  // coalesce: sorted by source then destination
  apply_edge_options(g, spec, 1);
  CHECK(g.src == std::vector<std::int32_t>{0, 1, 2, 3});
  CHECK(g.dst == std::vector<std::int32_t>{1, 0, 2, 0});

  g = base;
  spec = GraphSpec{};
  spec.add_self_loops = true;  // appended, one per node
  apply_edge_options(g, spec, 1);
  CHECK(g.num_edges() == 9);
  CHECK(g.src.back() == 3);
  CHECK(g.dst.back() == 3);

  const EdgeList big = build_json({{"generator", "erdos_renyi"}, {"num_nodes", 50}, {"num_edges", 400}}, 9);
  g = big;
  spec = GraphSpec{};
  spec.order = EdgeOrder::sorted_by_destination;
  apply_edge_options(g, spec, 1);
  CHECK(edge_multiset(g) == edge_multiset(big));
  for (std::size_t e = 1; e < g.src.size(); ++e) {
    CHECK(std::make_pair(g.dst[e - 1], g.src[e - 1]) <= std::make_pair(g.dst[e], g.src[e]));
  }

  EdgeList s1 = big, s2 = big;
  spec.order = EdgeOrder::shuffled;
  spec.num_relations = 4;
  apply_edge_options(s1, spec, 7);
  apply_edge_options(s2, spec, 7);
  CHECK(edge_multiset(s1) == edge_multiset(big));
  CHECK(s1.src != big.src);
  CHECK(s1.src == s2.src);
  CHECK(s1.edge_type == s2.edge_type);
  CHECK(s1.num_relations == 4);
  REQUIRE(s1.edge_type.size() == s1.src.size());
  std::set<std::int32_t> types(s1.edge_type.begin(), s1.edge_type.end());
  CHECK(types == std::set<std::int32_t>{0, 1, 2, 3});
}

TEST_CASE("The graph object is parsed strictly, echoed with its defaults, and the echo builds the same graph", "[graphs][unit]") {
  CHECK_THAT(spec_error({{"generator", "erdos_renyi"}, {"num_nodes", 10}, {"num_edges", 5}, {"colour", 1}}),
             Contains("w.json") && Contains("graph.colour"));
  CHECK_THAT(spec_error({{"num_nodes", 10}}), Contains("exactly one graph source"));
  CHECK_THAT(spec_error({{"preset", "cora"}, {"generator", "rmat"}}), Contains("exactly one graph source"));
  CHECK_THAT(spec_error({{"generator", "barabasi"}}), Contains("graph.generator") && Contains("rmat"));
  CHECK_THAT(spec_error({{"generator", "rmat"}, {"scale", 8}, {"a", 0.5}}), Contains("a + b + c + d = 1"));
  CHECK_THAT(spec_error({{"generator", "rmat"}, {"scale", 8}, {"num_nodes", 256}}), Contains("exactly one of \"scale\""));
  CHECK_THAT(spec_error({{"generator", "small_world"}, {"num_nodes", 10}, {"k", 3}, {"rewire_probability", 0}}),
             Contains("graph.k") && Contains("even"));
  CHECK_THAT(spec_error({{"generator", "erdos_renyi"}, {"num_nodes", 0}, {"num_edges", 5}}), Contains("graph.num_nodes"));
  CHECK_THAT(spec_error({{"generator", "erdos_renyi"}, {"num_nodes", 10}, {"num_edges", 5}, {"edge_order", "random"}}),
             Contains("graph.edge_order") && Contains("shuffled"));
  CHECK_THAT(spec_error({{"generator", "molecules"}, {"num_graphs", 100000000}}), Contains("graph.num_graphs") && Contains("int32"));
  CHECK_THAT(spec_error({{"file", "no-such-graph.txt"}}), Contains("graph.file") && Contains("no such file"));

  const GraphSpec spec = parse_graph_spec({{"generator", "rmat"}, {"scale", 9}, {"symmetrize", true}, {"edge_order", "shuffled"}},
                                          "w.json", "graph");
  const json echo = to_json(spec);
  CHECK(echo["num_nodes"] == 512);
  CHECK(echo["num_edges"] == 512 * 16);  // Graph500 edge factor
  CHECK(echo["a"] == 0.57);
  CHECK(echo["edge_order"] == "shuffled");
  const GraphSpec again = parse_graph_spec(echo, "echo.json", "graph");
  const EdgeList g1 = build(spec, 4), g2 = build(again, 4);
  CHECK(g1.src == g2.src);
  CHECK(g1.dst == g2.dst);
}

TEST_CASE("Reverse Cuthill-McKee shrinks the bandwidth of a shuffled grid graph", "[graphs][unit]") {
  constexpr int side = 30;
  std::vector<std::pair<int, int>> pairs;
  for (int r = 0; r < side; ++r) {
    for (int c = 0; c < side; ++c) {
      if (c + 1 < side) pairs.emplace_back(r * side + c, r * side + c + 1);
      if (r + 1 < side) pairs.emplace_back(r * side + c, (r + 1) * side + c);
    }
  }
  // Shuffle the labels so the grid's natural banded order is lost.
  std::vector<std::int32_t> shuffle(side * side);
  std::iota(shuffle.begin(), shuffle.end(), 0);
  auto engine = graph_engine(11, 0);
  for (std::size_t i = shuffle.size() - 1; i > 0; --i) std::swap(shuffle[i], shuffle[bounded(engine, i + 1)]);
  const EdgeList grid = relabel(from_pairs(side * side, pairs), shuffle);
  CHECK(bandwidth(grid) > 10 * side);

  const Labels rcm = reverse_cuthill_mckee(grid);
  std::vector<std::int32_t> sorted = rcm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int32_t> identity(side * side);
  std::iota(identity.begin(), identity.end(), 0);
  CHECK(sorted == identity);
  // Cuthill-McKee's level structure on a grid is its anti-diagonals: bandwidth about the side length.
  CHECK(bandwidth(grid, rcm) <= 2 * side);
}

TEST_CASE("METIS k-way cuts far fewer edges than a linear split on a clustered graph", "[graphs][unit]") {
  // 8 cliques of 16 nodes, a ring of single links between them, node ids shuffled.
  constexpr int clusters = 8, size = 16;
  std::vector<std::pair<int, int>> pairs;
  for (int k = 0; k < clusters; ++k) {
    for (int i = 0; i < size; ++i) {
      for (int j = 0; j < size; ++j) {
        if (i != j) pairs.emplace_back(k * size + i, k * size + j);
      }
    }
    pairs.emplace_back(k * size, ((k + 1) % clusters) * size + 1);
    pairs.emplace_back(((k + 1) % clusters) * size + 1, k * size);
  }
  std::vector<std::int32_t> shuffle(clusters * size);
  std::iota(shuffle.begin(), shuffle.end(), 0);
  auto engine = graph_engine(5, 0);
  for (std::size_t i = shuffle.size() - 1; i > 0; --i) std::swap(shuffle[i], shuffle[bounded(engine, i + 1)]);
  const EdgeList g = relabel(from_pairs(clusters * size, pairs), shuffle);

  const auto parts = metis_partition(g, clusters, 1);
  REQUIRE(parts.size() == static_cast<std::size_t>(clusters * size));
  std::map<std::int32_t, int> count;
  for (auto p : parts) ++count[p];
  CHECK(count.size() == static_cast<std::size_t>(clusters));
  for (auto [p, n] : count) CHECK(n == size);
  CHECK(edges_cut(g, parts) == 2 * clusters);  // only the ring links

  std::vector<std::int32_t> linear(parts.size());
  for (std::size_t v = 0; v < linear.size(); ++v) linear[v] = static_cast<std::int32_t>(v / size);
  CHECK(edges_cut(g, linear) > 10 * edges_cut(g, parts));
  CHECK(metis_partition(g, 8, 1) == parts);  // deterministic in the seed
}

TEST_CASE("Degree statistics count in- and out-degrees with isolated nodes", "[graphs][unit]") {
  const EdgeList g = from_pairs(4, {{0, 1}, {0, 2}, {1, 2}, {0, 2}});
  const DegreeStats in = in_degree_stats(g), out = out_degree_stats(g);
  CHECK(in.max == 3);
  CHECK(in.min == 0);
  CHECK(in.zero_count == 2);
  CHECK(in.mean == Approx(1.0));
  CHECK(out.max == 3);
  CHECK(out.zero_count == 2);
}
