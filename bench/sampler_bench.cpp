// Host-side mini-batch loaders (workloads/loaders/), on the shapes PyG's examples use them at:
//  - NeighborLoader, num_neighbors [25, 10], batch_size 1024, shuffle (PyG examples/reddit.py), over
//    the training nodes of a PubMed-shaped graph (the "pubmed" preset). Training nodes: Planetoid's
//    split="full", every node but the 500 validation and 1000 test nodes (PyG
//    torch_geometric/datasets/planetoid.py), 18,217 nodes; the preset's ids carry no locality, so the
//    first 18,217 stand for them. Goal (issue 13): an epoch's sampling well under a second.
//  - Cluster-GCN (ClusterData + ClusterLoader) on the same graph: 100 METIS parts of about 200 nodes,
//    5 per batch [assumption: PubMed has no canonical Cluster-GCN setting; PyG's Reddit example takes
//    1500 parts, 20 per batch].
//  - Packing a QM9-shaped dataset (130,831 molecules, PyG torch_geometric/datasets/qm9.py, complete
//    graphs) into fixed batches of 256 nodes and 24 graphs (about 14 molecules) [assumption: an
//    IPU-sized batch]: lpfhp against stream packing, with the share of padding in the packed batches.
//    Two edge budgets: 28 per node (the largest molecule's, so edges never bind) and 18 per node
//    (about the mean of 17.5, so edges bind): longest-first gathers the edge-dense large molecules
//    in the first packs, where the edge budget runs out before the nodes do.
#include <benchmark/benchmark.h>

#include <numeric>
#include <vector>

#include "workloads/graphs/graph.hpp"
#include "workloads/loaders/batch_order.hpp"
#include "workloads/loaders/cluster_loader.hpp"
#include "workloads/loaders/fixed_size.hpp"
#include "workloads/loaders/graph_dataset.hpp"
#include "workloads/loaders/neighbor_sampler.hpp"

using namespace tilesim::workloads;
using namespace tilesim::workloads::loaders;

namespace {

constexpr std::uint64_t seed = 1;
constexpr std::int64_t pubmed_training_nodes = 19717 - 500 - 1000;
constexpr std::int64_t qm9_molecules = 130831;

const graphs::EdgeList& pubmed() {
  static const graphs::EdgeList g = graphs::build(graphs::parse_graph_spec({{"preset", "pubmed"}}, "bench", "graph"), seed);
  return g;
}

const NeighborIndex& pubmed_index() {
  static const NeighborIndex index = build_neighbor_index(pubmed());
  return index;
}

void BM_neighbor_index_pubmed(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(build_neighbor_index(pubmed()).sources.data());
  state.counters["edges"] = static_cast<double>(pubmed().num_edges());
}

// One epoch: the shuffled seed batches, then [25, 10] neighbours of each batch.
void BM_neighbor_epoch_pubmed_25_10(benchmark::State& state) {
  const NeighborIndex& index = pubmed_index();
  std::vector<std::int32_t> training(static_cast<std::size_t>(pubmed_training_nodes));
  std::iota(training.begin(), training.end(), 0);
  std::int64_t epoch = 0, batches = 0, nodes = 0, edges = 0;
  for (auto _ : state) {
    const auto seeds = seed_batches(training, 1024, true, seed, epoch);
    for (std::size_t b = 0; b < seeds.size(); ++b) {
      const Batch batch = sample_neighbors(index, seeds[b], {25, 10}, false, batch_seed(seed, epoch, static_cast<std::int64_t>(b)));
      nodes += batch.graph.num_nodes;
      edges += batch.graph.num_edges();
    }
    batches += static_cast<std::int64_t>(seeds.size());
    ++epoch;
  }
  state.counters["batches_per_epoch"] = static_cast<double>(batches) / static_cast<double>(epoch);
  state.counters["nodes_per_batch"] = static_cast<double>(nodes) / static_cast<double>(batches);
  state.counters["edges_per_batch"] = static_cast<double>(edges) / static_cast<double>(batches);
}

void BM_metis_clusters_pubmed_100(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(cluster_graph(pubmed(), 100, seed).part_of_node.data());
}

// One epoch of Cluster-GCN batches: 20 batches of 5 parts.
void BM_cluster_epoch_pubmed_100_parts_5_per_batch(benchmark::State& state) {
  static const Clustering clustering = cluster_graph(pubmed(), 100, seed);
  std::int64_t epoch = 0, batches = 0, nodes = 0, edges = 0;
  for (auto _ : state) {
    for (const auto& parts : cluster_batches(100, 5, true, seed, epoch)) {
      const Batch batch = cluster_batch(pubmed_index(), clustering, parts);
      nodes += batch.graph.num_nodes;
      edges += batch.graph.num_edges();
      ++batches;
    }
    ++epoch;
  }
  state.counters["batches_per_epoch"] = static_cast<double>(batches) / static_cast<double>(epoch);
  state.counters["nodes_per_batch"] = static_cast<double>(nodes) / static_cast<double>(batches);
  state.counters["edges_per_batch"] = static_cast<double>(edges) / static_cast<double>(batches);
}

const GraphDataset& qm9() {
  static const GraphDataset d = [] {
    DatasetSpec spec;
    spec.kind = DatasetKind::qm9;
    spec.num_graphs = qm9_molecules;
    return make_dataset(spec, seed);
  }();
  return d;
}

template <class Pack>
void pack_qm9(benchmark::State& state, Pack pack, std::int64_t edges_per_node) {
  const FixedSize size{256, 256 * edges_per_node, 24};
  const auto order = graph_batches(qm9().num_graphs(), qm9().num_graphs(), true, seed, 0).front();
  std::vector<std::vector<std::int32_t>> packs;
  for (auto _ : state) packs = pack(qm9(), order, size);
  std::int64_t nodes = 0, edges = 0;
  for (const auto& p : packs) {
    for (std::int32_t g : p) {
      nodes += qm9().nodes_per_graph[static_cast<std::size_t>(g)];
      edges += qm9().edges_of(g);
    }
  }
  const auto n = static_cast<double>(packs.size());
  state.counters["packs"] = n;
  state.counters["graphs_per_pack"] = static_cast<double>(qm9().num_graphs()) / n;
  state.counters["padding_node_share"] = 1.0 - static_cast<double>(nodes) / (n * static_cast<double>(size.num_nodes));
  state.counters["padding_edge_share"] = 1.0 - static_cast<double>(edges) / (n * static_cast<double>(size.num_edges));
  state.counters["padding_graph_share"] = 1.0 - static_cast<double>(qm9().num_graphs()) / (n * static_cast<double>(size.num_graphs));
}

void BM_pack_qm9_lpfhp(benchmark::State& state) { pack_qm9(state, pack_lpfhp, state.range(0)); }
void BM_pack_qm9_stream(benchmark::State& state) { pack_qm9(state, pack_stream, state.range(0)); }

}  // namespace

BENCHMARK(BM_neighbor_index_pubmed)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_neighbor_epoch_pubmed_25_10)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_metis_clusters_pubmed_100)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_cluster_epoch_pubmed_100_parts_5_per_batch)->Unit(benchmark::kMillisecond);
// Argument: the edge budget per node of the fixed size.
BENCHMARK(BM_pack_qm9_lpfhp)->Arg(28)->Arg(18)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_pack_qm9_stream)->Arg(28)->Arg(18)->Unit(benchmark::kMillisecond);
