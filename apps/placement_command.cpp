// tilesim placement: what a locality-aware mapping of node rows onto the IPU's tiles buys for one
// message-passing step of a graph: linear spread, reverse Cuthill-McKee then linear, METIS k-way parts.
// The study is runs/placement_study (the Python module's tilesim.placement runs it too); the command
// reads its options and prints the report as a table or JSON.
#include <iomanip>
#include <iostream>
#include <memory>

#include "apps/cli_checks.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "common/limits.hpp"
#include "runs/placement_study.hpp"

namespace tilesim::cli {

namespace {

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
  runs::PlacementStudyRequest request;
  request.workload = args.workload;
  request.graph = args.graph;
  request.features = args.features;
  request.dtype = args.dtype;
  request.machine = args.machine;
  request.symmetrize = args.symmetrize;
  request.seed = args.seed;
  const nlohmann::json report = runs::study_placements(request);
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
