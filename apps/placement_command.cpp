// tilesim placement: what a locality-aware mapping of node rows onto the IPU's tiles buys for one
// message-passing step of a graph: linear spread, reverse Cuthill-McKee then linear, METIS k-way parts.
#include <chrono>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "apps/cli_checks.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/strict_json.hpp"
#include "common/wall_clock.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/placement.hpp"
#include "workloads/graphs/algorithms.hpp"
#include "workloads/graphs/graph.hpp"

namespace tilesim::cli {

namespace {

namespace graphs = workloads::graphs;
using Clock = std::chrono::steady_clock;

// Bytes per feature value for the dtypes a row may be stored in.
std::int64_t element_bytes(const std::string& dtype) {
  if (dtype == "float32") return 4;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  throw InputError("", "--dtype", "float32, float16 or bfloat16", "\"" + dtype + "\"");
}

struct Source {
  graphs::GraphSpec spec;
  std::uint64_t seed = 0;
  std::string label;
  std::int64_t workload_features = 0;  // the workload's top-level "num_features" (overrides the graph's)
};

// The "graph" object, "seed" and "num_features" of a workload file; other keys belong to `tilesim run`
// and are not read here.
Source source_from_workload(const std::string& path) {
  const nlohmann::json doc = load_json_file(path);
  if (!doc.is_object() || !doc.contains("graph")) {
    throw InputError(path, "graph", "a \"graph\" object (docs/graph-format.md)", doc.is_object() ? "nothing" : describe_json(doc));
  }
  Source s;
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
  s.label = path;
  return s;
}

void print_table(const nlohmann::json& report) {
  const auto& g = report["graph"];
  std::cout << "graph: " << report["source"].get<std::string>() << "  nodes " << g["num_nodes"] << ", edges "
            << g["num_edges"] << ", in-degree mean " << std::fixed << std::setprecision(1) << g["in_degree"]["mean"].get<double>()
            << " max " << g["in_degree"]["max"] << "; built in " << std::setprecision(2) << g["build_s"].get<double>() << " s\n";
  std::cout << "rows: " << report["num_features"] << " x " << report["dtype"].get<std::string>() << " = " << report["row_bytes"]
            << " bytes; machine " << report["machine"].get<std::string>() << " (" << report["num_tiles"]
            << " tiles); bandwidth " << report["bandwidth"]["as_given"] << " as given, " << report["bandwidth"]["rcm"]
            << " after RCM\n";
  std::cout << "one message-passing step's exchange (simulated, timing-only):\n";
  std::cout << std::left << std::setw(8) << "placement" << std::right << std::setw(10) << "edge cut" << std::setw(14)
            << "exchange MB" << std::setw(18) << "max recv KB/tile" << std::setw(15) << "max rows/tile" << std::setw(16)
            << "max edges/tile" << std::setw(8) << "rounds" << std::setw(13) << "exch cycles" << std::setw(13) << "sync cycles"
            << std::setw(12) << "time us" << std::setw(11) << "plan s" << "\n";
  for (const auto& p : report["placements"]) {
    std::cout << std::left << std::setw(9) << p["placement"].get<std::string>() << std::right << std::fixed << std::setw(9)
              << std::setprecision(3) << p["edge_cut_fraction"].get<double>() << std::setw(14) << std::setprecision(2)
              << p["exchange_bytes"].get<double>() / 1e6 << std::setw(18) << std::setprecision(1)
              << p["max_bytes_received_per_tile"].get<double>() / 1024.0 << std::setw(15) << p["max_rows_per_tile"].get<std::int64_t>()
              << std::setw(16) << p["max_edges_per_tile"].get<std::int64_t>() << std::setw(8) << p["rounds"].get<std::int64_t>()
              << std::setw(13) << p["exchange_cycles"].get<std::int64_t>() << std::setw(13) << p["sync_cycles"].get<std::int64_t>()
              << std::setw(12) << std::setprecision(2) << p["time_s"].get<double>() * 1e6 << std::setw(11) << std::setprecision(2)
              << p["placement_s"].get<double>() << "\n";
  }
}

}  // namespace

int placement_command(const PlacementArgs& args) {
  if (args.workload.empty() == args.graph.empty()) {
    throw InputError("", "", "a workload file or --graph PRESET (one of them)", args.workload.empty() ? "neither" : "both");
  }
  Source source;
  if (!args.workload.empty()) {
    source = source_from_workload(args.workload);
  } else {
    source.spec = graphs::parse_graph_spec({{"preset", args.graph}}, "", "--graph");
    source.label = "preset " + args.graph;
  }
  if (args.symmetrize) {
    source.spec.symmetrize = true;
    source.spec.deduplicate = true;
  }
  if (args.seed) source.seed = *args.seed;
  if (args.features) limits::checked_option("--features", *args.features, 1, limits::max_size, "a feature width");
  const std::int64_t features =
      args.features ? *args.features : source.workload_features > 0 ? source.workload_features : source.spec.num_features;
  if (features <= 0) {
    throw InputError(source.label, "graph.num_features", "a feature width (in the graph object or --features F)", "none");
  }
  const std::int64_t row_bytes = features * element_bytes(args.dtype);
  const ipu::IpuMachine machine = ipu::load_ipu_machine(args.machine);
  const std::int32_t tiles = machine.chip.num_tiles;
  // A row lives whole on its tile: a row wider than a tile's SRAM fits nowhere, known before the graph.
  if (row_bytes > machine.chip.sram_bytes_per_tile)
    throw PlanError("one row of " + std::to_string(features) + " " + args.dtype + " features is " + std::to_string(row_bytes) +
                    " bytes, more than a tile's " + std::to_string(machine.chip.sram_bytes_per_tile) + " bytes of SRAM on " +
                    machine.chip.name + "; use fewer features");

  std::cerr << "placement: building the graph (" << source.label << ")...\n";
  auto t0 = Clock::now();
  const graphs::EdgeList graph = graphs::build(source.spec, source.seed);
  const double build_s = seconds_since(t0);
  nlohmann::json report = {{"source", source.label},
                           {"graph_spec", graphs::to_json(source.spec)},
                           {"seed", source.seed},
                           {"num_features", features},
                           {"dtype", args.dtype},
                           {"row_bytes", row_bytes},
                           {"machine", machine.chip.name},
                           {"num_tiles", tiles},
                           {"graph",
                            {{"num_nodes", graph.num_nodes},
                             {"num_edges", graph.num_edges()},
                             {"in_degree", graphs::in_degree_stats(graph).to_json()},
                             {"out_degree", graphs::out_degree_stats(graph).to_json()},
                             {"build_s", build_s}}}};

  nlohmann::json placements = nlohmann::json::array();
  auto run = [&](const std::string& name, const ipu::TileOfRow& tile_of_row, double placement_s) {
    std::cerr << "placement: simulating the exchange of " << name << "...\n";
    auto result = ipu::simulate_placement(name, graph.src, graph.dst, tile_of_row, row_bytes, machine);
    auto j = result.to_json();
    j["placement_s"] = placement_s;
    placements.push_back(j);
  };
  run("linear", ipu::linear_row_tiles(graph.num_nodes, tiles), 0.0);

  std::cerr << "placement: reverse Cuthill-McKee...\n";
  t0 = Clock::now();
  const graphs::Labels rcm = graphs::reverse_cuthill_mckee(graph);
  const ipu::TileOfRow rcm_tiles = ipu::relabelled_row_tiles(rcm, tiles);
  const double rcm_s = seconds_since(t0);
  report["bandwidth"] = {{"as_given", graphs::bandwidth(graph)}, {"rcm", graphs::bandwidth(graph, rcm)}};
  run("rcm", rcm_tiles, rcm_s);

  std::cerr << "placement: METIS k-way into " << tiles << " parts...\n";
  t0 = Clock::now();
  const auto parts = graphs::metis_partition(graph, tiles, source.seed);
  const ipu::TileOfRow metis_tiles = ipu::part_row_tiles(parts, static_cast<std::int32_t>(std::min<std::int64_t>(tiles, graph.num_nodes)), tiles);
  run("metis", metis_tiles, seconds_since(t0));
  report["placements"] = placements;

  if (args.json) {
    std::cout << report.dump(2) << std::endl;
  } else {
    print_table(report);
  }
  return 0;
}

// The subcommand's options on the command line (apps/command_line.hpp).
void add_placement_command(CLI::App& app, std::vector<Command>& commands) {
  struct Options {
    PlacementArgs placement;
    std::int64_t placement_seed = 0, placement_features = 0;
  };
  const auto o = std::make_shared<Options>();
  PlacementArgs& placement = o->placement;
  std::int64_t& placement_seed = o->placement_seed;
  auto* placement_cmd = app.add_subcommand(
      "placement", "Exchange of one message-passing step under linear, RCM and METIS placements of node rows on the IPU");
  placement_cmd->add_option("workload", placement.workload, "Workload JSON file with a \"graph\" object (docs/graph-format.md)");
  placement_cmd->add_option("--graph", placement.graph, "A graph preset instead (cora, pubmed, ogbn-arxiv, ...)");
  std::int64_t& placement_features = o->placement_features;
  auto* placement_features_opt =
      placement_cmd->add_option("--features", placement_features, "Feature width (default: the graph's num_features)")
          ->check(integer_in(1, limits::max_size, "a feature width"));
  placement_cmd->add_option("--dtype", placement.dtype, "Feature dtype: float32, float16 or bfloat16")->capture_default_str();
  placement_cmd->add_option("--machine", placement.machine, "IPU machine: bow, mk2, mk1 or a machine file")->capture_default_str();
  placement_cmd->add_flag("--symmetrize", placement.symmetrize, "Symmetrise and deduplicate the graph first");
  auto* placement_seed_opt = placement_cmd->add_option("--seed", placement_seed, "Graph seed (default: the workload's, or 0)")
                                 ->check(integer_in(0, limits::max_seed));
  placement_cmd->add_flag("--json", placement.json, "Print JSON");
  commands.push_back({placement_cmd, [o, placement_seed_opt, placement_features_opt] {
    if (*placement_seed_opt) o->placement.seed = checked_seed(o->placement_seed);
    if (*placement_features_opt) o->placement.features = o->placement_features;
    return placement_command(o->placement);
  }});
}

}  // namespace tilesim::cli
