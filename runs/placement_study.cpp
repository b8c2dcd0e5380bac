// tilesim placement's study: the graph is built once and its rows placed three ways on the machine's
// tiles; each placement's exchange is simulated on the engine (backends/ipu_placement.hpp).
#include "runs/placement_study.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>

#include "backends/ipu_placement.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/strict_json.hpp"
#include "common/wall_clock.hpp"
#include "workloads/graphs/algorithms.hpp"
#include "workloads/graphs/graph.hpp"

namespace tilesim::runs {

namespace {

namespace graphs = workloads::graphs;
using Clock = std::chrono::steady_clock;

// Bytes per feature value for the dtypes a row may be stored in.
std::int64_t row_element_bytes(const std::string& dtype) {
  if (dtype == "float32") return 4;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  throw InputError("", "--dtype", "float32, float16 or bfloat16", "\"" + dtype + "\"");
}

struct PlacementSource {
  graphs::GraphSpec spec;
  std::uint64_t seed = 0;
  std::string label;
  std::int64_t workload_features = 0;  // the workload's top-level "num_features" (overrides the graph's)
};

// A workload's name in the report when it has no file: what the caller called it.
std::string in_memory_label(const nlohmann::json& doc) {
  const auto name = doc.find("name");
  return name != doc.end() && name->is_string() ? "workload " + name->get<std::string>() + " (in memory)" : "workload (in memory)";
}

// The "graph" object, "seed" and "num_features" of a workload; other keys belong to `tilesim run` and
// are not read here.
PlacementSource source_from_workload(const PlacementStudyRequest& request) {
  const std::string& path = request.workload;
  const nlohmann::json doc = request.document ? *request.document : load_json_file(path);
  if (!doc.is_object() || !doc.contains("graph")) {
    throw InputError(path, "graph", "a \"graph\" object (docs/graph-format.md)", doc.is_object() ? "nothing" : describe_json(doc));
  }
  PlacementSource s;
  s.spec = graphs::parse_graph_spec(doc["graph"], path, "graph");
  if (doc.contains("seed")) {
    const auto& seed = doc["seed"];
    if (!seed.is_number_integer() || seed.get<std::int64_t>() < 0) {
      throw InputError(path, "seed", "a non-negative integer", describe_json(seed));
    }
    s.seed = seed.get<std::uint64_t>();
  }
  if (doc.contains("num_features")) {
    const auto& f = doc["num_features"];
    if (!f.is_number_integer() || f.get<std::int64_t>() < 1) {
      throw InputError(path, "num_features", "a positive integer", describe_json(f));
    }
    s.workload_features = f.get<std::int64_t>();
  }
  s.label = path.empty() ? in_memory_label(doc) : path;
  return s;
}

PlacementSource source_of(const PlacementStudyRequest& request) {
  const bool has_workload = !request.workload.empty() || request.document.has_value();
  if (has_workload == !request.graph.empty()) {
    throw InputError("", "", "a workload file or --graph PRESET (one of them)", has_workload ? "both" : "neither");
  }
  PlacementSource source;
  if (has_workload) {
    source = source_from_workload(request);
  } else {
    source.spec = graphs::parse_graph_spec({{"preset", request.graph}}, "", "--graph");
    source.label = "preset " + request.graph;
  }
  if (request.symmetrize) {
    source.spec.symmetrize = true;
    source.spec.deduplicate = true;
  }
  if (request.seed) source.seed = *request.seed;
  return source;
}

}  // namespace

nlohmann::json study_placements(const PlacementStudyRequest& request) {
  const PlacementSource source = source_of(request);
  if (request.features) limits::checked_option("--features", *request.features, 1, limits::max_size, "a feature width");
  const std::int64_t features =
      request.features ? *request.features : source.workload_features > 0 ? source.workload_features : source.spec.num_features;
  if (features <= 0) {
    throw InputError(source.label, "graph.num_features", "a feature width (in the graph object or --features F)", "none");
  }
  const std::int64_t row_bytes = features * row_element_bytes(request.dtype);
  const backends::PlacementMachine machine(request.machine);
  const std::int32_t tiles = machine.num_tiles();
  // A row lives whole on its tile: a row wider than a tile's SRAM fits nowhere, known before the graph.
  if (row_bytes > machine.sram_bytes_per_tile())
    throw PlanError("one row of " + std::to_string(features) + " " + request.dtype + " features is " + std::to_string(row_bytes) +
                    " bytes, more than a tile's " + std::to_string(machine.sram_bytes_per_tile()) + " bytes of SRAM on " +
                    machine.chip_name() + "; use fewer features");

  if (request.progress) std::cerr << "placement: building the graph (" << source.label << ")...\n";
  auto t0 = Clock::now();
  const graphs::EdgeList graph = graphs::build(source.spec, source.seed);
  const double build_s = seconds_since(t0);
  nlohmann::json report = {{"source", source.label},
                           {"graph_spec", graphs::to_json(source.spec)},
                           {"seed", source.seed},
                           {"num_features", features},
                           {"dtype", request.dtype},
                           {"row_bytes", row_bytes},
                           {"machine", machine.chip_name()},
                           {"num_tiles", tiles},
                           {"graph",
                            {{"num_nodes", graph.num_nodes},
                             {"num_edges", graph.num_edges()},
                             {"in_degree", graphs::in_degree_stats(graph).to_json()},
                             {"out_degree", graphs::out_degree_stats(graph).to_json()},
                             {"build_s", build_s}}}};

  nlohmann::json placements = nlohmann::json::array();
  auto run = [&](const std::string& name, const backends::RowTiles& tile_of_row, double placement_s) {
    if (request.progress) std::cerr << "placement: simulating the exchange of " << name << "...\n";
    auto j = machine.simulate_exchange(name, graph.src, graph.dst, tile_of_row, row_bytes);
    j["placement_s"] = placement_s;
    placements.push_back(j);
  };
  run("linear", machine.linear_rows(graph.num_nodes), 0.0);

  if (request.progress) std::cerr << "placement: reverse Cuthill-McKee...\n";
  t0 = Clock::now();
  const graphs::Labels rcm = graphs::reverse_cuthill_mckee(graph);
  const backends::RowTiles rcm_tiles = machine.relabelled_rows(rcm);
  const double rcm_s = seconds_since(t0);
  report["bandwidth"] = {{"as_given", graphs::bandwidth(graph)}, {"rcm", graphs::bandwidth(graph, rcm)}};
  run("rcm", rcm_tiles, rcm_s);

  if (request.progress) std::cerr << "placement: METIS k-way into " << tiles << " parts...\n";
  t0 = Clock::now();
  const auto parts = graphs::metis_partition(graph, tiles, source.seed);
  const backends::RowTiles metis_tiles = machine.part_rows(parts, static_cast<std::int32_t>(std::min<std::int64_t>(tiles, graph.num_nodes)));
  run("metis", metis_tiles, seconds_since(t0));
  report["placements"] = placements;
  return report;
}

}  // namespace tilesim::runs
