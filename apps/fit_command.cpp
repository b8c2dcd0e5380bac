// tilesim fit WORKLOAD.json --backend ipu:MACHINE: the largest batch of a mini-batch workload whose
// inference step and whose training step fit the simulated IPU's tile memory, found by search over the
// planner's memory accounting (each op's plan plus the tensors live across it, planning/step_memory.hpp)
// without running anything. The knob searched is the loader's batch size: batch_size (neighbour
// sampling, padded graphs), clusters_per_batch (Cluster-GCN) or, for packed graphs, the fixed size
// (num_nodes, with num_edges and num_graphs scaled in proportion).
#include <iostream>
#include <memory>

#include "apps/cli_checks.hpp"
#include "apps/command_line.hpp"
#include "apps/commands.hpp"
#include "common/limits.hpp"
#include "runs/batch_fit.hpp"

namespace tilesim::cli {

int fit_command(const FitArgs& args) {
  // The options first, then the workload (tilesim.fit makes the same request from its document).
  runs::BatchFitRequest request = runs::fit_request_for(args.backend, args.sample_batches);
  request.progress = !args.json;
  request.workload = workloads::load_workload(args.workload);
  request.workload_file = args.workload;
  const runs::BatchFit answer = runs::fit_batch_size(request);
  if (args.json) std::cout << answer.report.dump(2) << std::endl;
  else std::cout << answer.summary;
  return 0;
}

// The subcommand's options on the command line (apps/command_line.hpp).
void add_fit_command(CLI::App& app, std::vector<Command>& commands) {
  struct Options {
    FitArgs fit;
  };
  const auto o = std::make_shared<Options>();
  FitArgs& fit = o->fit;
  auto* fit_cmd = app.add_subcommand(
      "fit", "The largest batch of a mini-batch workload whose inference and training steps fit the simulated IPU's tiles");
  fit_cmd->add_option("workload", fit.workload, "Workload JSON file with a \"loader\" (docs/workload-format.md)")->required();
  fit_cmd->add_option("--backend", fit.backend, "The simulated IPU: ipu:bow, ipu:bow-2000, ipu:mk2, ... or ipu:FILE")->capture_default_str();
  fit_cmd->add_option("--sample-batches", fit.sample_batches,
                      "Batches made per candidate size; the largest sets its fixed shape")
      ->check(integer_in(1, limits::max_steps))
      ->capture_default_str();
  fit_cmd->add_flag("--json", fit.json, "Print the answer as JSON");
  commands.push_back({fit_cmd, [o] {
    return fit_command(o->fit);
  }});
}

}  // namespace tilesim::cli
