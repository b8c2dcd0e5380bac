#include "workloads/loaders/graph_dataset.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "common/error.hpp"
#include "common/strict_json.hpp"
#include "workloads/graphs/generators.hpp"
#include "workloads/graphs/graph_random.hpp"
#include "workloads/loaders/batch_order.hpp"
#include "workloads/random_streams.hpp"

namespace tilesim::workloads::loaders {

namespace {

constexpr std::int64_t max_atoms = 1000;  // far above any small-graph dataset; keeps n(n-1) small

// Node count -> graphs, ascending by node count.
using Histogram = std::vector<std::pair<std::int32_t, std::int64_t>>;

Histogram read_histogram(const std::string& key) {
  const std::string file = graph_sizes_file();
  const auto document = load_json_file(file);
  ObjectReader top(document, file, "");
  top.string("about");
  ObjectReader entry = top.object(key);
  entry.string("source");
  ObjectReader counts = entry.object("counts");
  Histogram histogram;
  for (const auto& item : document[key]["counts"].items()) {
    std::size_t used = 0;
    int nodes = 0;
    try {
      nodes = std::stoi(item.key(), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.key().size() || nodes < 1 || nodes > max_atoms) {
      throw InputError(file, counts.path_of(item.key()), "a node count in [1, " + std::to_string(max_atoms) + "] as key",
                       describe_json(item.key()));
    }
    histogram.emplace_back(nodes, counts.integer(item.key(), 0, std::numeric_limits<std::int32_t>::max()));
  }
  counts.finish();
  entry.finish();
  std::sort(histogram.begin(), histogram.end());
  const std::int64_t total = std::accumulate(histogram.begin(), histogram.end(), std::int64_t{0},
                                             [](std::int64_t sum, const auto& bin) { return sum + bin.second; });
  if (total == 0) throw InputError(file, counts.path(), "at least one graph", "none");
  return histogram;
}

const Histogram& qm9_histogram() {
  static const Histogram h = read_histogram("qm9_atoms_per_molecule");
  return h;
}

// A node count drawn from the histogram: a uniform graph of the histogram's population.
std::int32_t draw(const Histogram& histogram, std::int64_t total, std::mt19937_64& engine) {
  auto r = static_cast<std::int64_t>(graphs::bounded(engine, static_cast<std::uint64_t>(total)));
  for (const auto& [nodes, count] : histogram) {
    if (r < count) return nodes;
    r -= count;
  }
  return histogram.back().first;  // not reached: r < total
}

void check_spec(const DatasetSpec& spec) {
  if (spec.num_graphs < 0 || spec.num_graphs > std::numeric_limits<std::int32_t>::max()) {
    throw std::invalid_argument("num_graphs must be in [0, 2^31 - 1], got " + std::to_string(spec.num_graphs));
  }
  if (spec.knn && spec.k < 1) throw std::invalid_argument("knn needs k >= 1, got " + std::to_string(spec.k));
  if (spec.kind == DatasetKind::water &&
      (spec.min_waters < 1 || spec.max_waters < spec.min_waters || 3 * spec.max_waters > max_atoms)) {
    throw std::invalid_argument("water clusters need 1 <= min_waters <= max_waters <= " + std::to_string(max_atoms / 3) +
                                ", got [" + std::to_string(spec.min_waters) + ", " + std::to_string(spec.max_waters) + "]");
  }
  if (spec.kind == DatasetKind::uniform && (spec.min_nodes < 1 || spec.max_nodes < spec.min_nodes || spec.max_nodes > max_atoms)) {
    throw std::invalid_argument("uniform graphs need 1 <= min_nodes <= max_nodes <= " + std::to_string(max_atoms) + ", got [" +
                                std::to_string(spec.min_nodes) + ", " + std::to_string(spec.max_nodes) + "]");
  }
}

}  // namespace

std::string graph_sizes_file() {
  if (const char* env = std::getenv("TILESIM_GRAPH_SIZES"); env && *env) return env;
  return TILESIM_GRAPH_SIZES_FILE;
}

std::int64_t GraphDataset::edges_of(std::int32_t graph) const {
  const std::int64_t n = nodes_per_graph.at(static_cast<std::size_t>(graph));
  return spec.knn ? n * std::min(spec.k, n - 1) : n * (n - 1);
}

GraphDataset make_dataset(const DatasetSpec& spec, std::uint64_t seed) {
  check_spec(spec);
  GraphDataset dataset;
  dataset.spec = spec;
  dataset.seed = seed;
  dataset.nodes_per_graph.resize(static_cast<std::size_t>(spec.num_graphs));
  auto engine = streams::named_engine(seed, "graph_dataset_sizes");
  if (spec.kind == DatasetKind::qm9) {
    const Histogram& histogram = qm9_histogram();
    const std::int64_t total = std::accumulate(histogram.begin(), histogram.end(), std::int64_t{0},
                                               [](std::int64_t sum, const auto& bin) { return sum + bin.second; });
    for (auto& n : dataset.nodes_per_graph) n = draw(histogram, total, engine);
  } else if (spec.kind == DatasetKind::uniform) {
    const auto choices = static_cast<std::uint64_t>(spec.max_nodes - spec.min_nodes + 1);
    for (auto& n : dataset.nodes_per_graph)
      n = static_cast<std::int32_t>(spec.min_nodes + static_cast<std::int64_t>(graphs::bounded(engine, choices)));
  } else {
    const auto choices = static_cast<std::uint64_t>(spec.max_waters - spec.min_waters + 1);
    for (auto& n : dataset.nodes_per_graph) {
      n = static_cast<std::int32_t>(3 * (spec.min_waters + static_cast<std::int64_t>(graphs::bounded(engine, choices))));
    }
  }
  return dataset;
}

Batch collate(const GraphDataset& dataset, const std::vector<std::int32_t>& graph_ids) {
  Batch batch;
  std::int64_t nodes = 0, edges = 0;
  for (std::int32_t g : graph_ids) {
    if (g < 0 || g >= dataset.num_graphs()) {
      throw std::invalid_argument("graph " + std::to_string(g) + " is not in [0, " + std::to_string(dataset.num_graphs()) + ")");
    }
    nodes += dataset.nodes_per_graph[static_cast<std::size_t>(g)];
    edges += dataset.edges_of(g);
  }
  auto& out = batch.graph;
  out.src.reserve(static_cast<std::size_t>(edges));
  out.dst.reserve(static_cast<std::size_t>(edges));
  out.graph_of_node.reserve(static_cast<std::size_t>(nodes));
  const auto connectivity = dataset.spec.knn ? graphs::MoleculeConnectivity::knn : graphs::MoleculeConnectivity::complete;
  for (std::int32_t g : graph_ids) {
    auto engine = streams::named_engine(streams::mix64(dataset.seed ^ streams::mix64(static_cast<std::uint64_t>(g))),
                                        "dataset_graph");
    graphs::append_molecule(out, dataset.nodes_per_graph[static_cast<std::size_t>(g)], connectivity, dataset.spec.k, engine);
  }
  batch.graph_ids = graph_ids;
  return batch;
}

std::vector<std::vector<std::int32_t>> graph_batches(std::int64_t num_graphs, std::int64_t batch_size, bool shuffle,
                                                     std::uint64_t seed, std::int64_t epoch) {
  if (num_graphs < 0 || num_graphs > std::numeric_limits<std::int32_t>::max()) {
    throw std::invalid_argument("num_graphs must be in [0, 2^31 - 1], got " + std::to_string(num_graphs));
  }
  std::vector<std::int32_t> ids(static_cast<std::size_t>(num_graphs));
  std::iota(ids.begin(), ids.end(), 0);
  return epoch_batches(std::move(ids), batch_size, shuffle, seed, epoch, "graph_batches");
}

}  // namespace tilesim::workloads::loaders
