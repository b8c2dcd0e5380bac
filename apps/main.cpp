// tilesim: command-line entry. Parses arguments (CLI11), calls the layers, maps errors to exit codes:
// 0 success, 1 internal error, 2 bad input (usage, workload, machine or index file), 3 does not fit.
#include <iostream>
#include <new>

#include <CLI/CLI.hpp>
#include <omp.h>

#include "apps/commands.hpp"
#include "common/error.hpp"
#include "sim/version.hpp"

namespace tilesim::cli {

std::string version_text() {
  return std::string("tilesim ") + TILESIM_VERSION + " (SystemC " + sim::systemc_version() + ", OpenMP " +
         std::to_string(_OPENMP) + ", " + std::to_string(omp_get_max_threads()) +
         " threads; backends: ipu (simulated), cpu (measured), gpu-model (modeled))";
}

static int dispatch(int argc, char** argv) {
  CLI::App app{"tilesim: how fast would gather/scatter and GNN workloads run on a tile-based IPU-class processor, "
               "against real CPU kernels, and why.",
               "tilesim"};
  app.set_version_flag("--version", version_text());
  app.require_subcommand(0, 1);

  RunArgs run;
  std::uint64_t seed = 0;
  auto* run_cmd = app.add_subcommand("run", "Run a workload on the chosen backends and write report.json");
  run_cmd->add_option("workload", run.workload, "Workload JSON file (format: docs/workload-format.md)")->required();
  run_cmd->add_option("--backends", run.backends,
                      "Comma-separated backends: ipu (= ipu:bow), ipu:MACHINE (bow, mk2, mk1 or a machine file), cpu, "
                      "gpu-model:MACHINE[:eager|:kernel] (a100-40gb, a100-80gb, h100-sxm, h200 or a machine file)")
      ->capture_default_str();
  run_cmd->add_option("--out", run.out_dir, "Directory for report.json (default out/<workload name>/)");
  run_cmd->add_flag("--json", run.json, "Print the report JSON on stdout instead of the table");
  run_cmd->add_option("--trace", run.trace, "Write a Chrome/Perfetto trace of the simulated run to this file");
  run_cmd->add_flag("--timing-only", run.timing_only, "Simulate cycles without moving real bytes (outputs not verified)");
  auto* seed_opt = run_cmd->add_option("--seed", seed, "Override the workload's random seed");
  run_cmd->add_option("--warmup", run.warmup, "Untimed calls before timing measured backends")->capture_default_str();
  run_cmd->add_option("--repeats", run.repeats, "Timed calls of measured backends (median reported)")->capture_default_str();

  bool machines_json = false;
  auto* machines_cmd = app.add_subcommand("machines", "List the machine files and their key figures");
  machines_cmd->add_flag("--json", machines_json, "Print JSON");

  ValidateArgs validate;
  auto* validate_cmd = app.add_subcommand(
      "validate", "Run the validation suite through the models; write validation.json, points.csv and plots");
  validate_cmd->add_option("--suite", validate.suite, "Validation suite (hydronet)")->capture_default_str();
  validate_cmd->add_flag("--json", validate.json, "Print validation.json on stdout instead of the table");
  validate_cmd->add_option("--out", validate.out_dir, "Output directory (default out/validation/)");
  bool validate_no_plots = false;
  validate_cmd->add_flag("--no-plots", validate_no_plots, "Skip the plots (no gnuplot needed)");

  CalibrateArgs calibrate;
  auto* calibrate_cmd = app.add_subcommand(
      "calibrate-model",
      "Fit a model's free figures to the calibration half of the measured data (A100 for --gpu, Bow for --ipu)");
  auto* gpu_opt = calibrate_cmd->add_option("--gpu", calibrate.gpu, "GPU machine to fit (a100-40gb or a machine file)");
  auto* ipu_opt = calibrate_cmd->add_option("--ipu", calibrate.ipu, "IPU machine to fit (bow or a machine file)");
  gpu_opt->excludes(ipu_opt);
  calibrate_cmd->add_option("--data", calibrate.data_dir,
                            "Directory of the measured CSVs (default: validation/hydronet-gnn/a100 for --gpu, .../bow for --ipu)");
  calibrate_cmd->add_flag("--write", calibrate.write, "Store the fitted figures in the machine file (and the files carrying its fit over)");
  calibrate_cmd->add_flag("--json", calibrate.json, "Print JSON");

  auto* help_cmd = app.add_subcommand("help", "Show this help");

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "tilesim: error: " << e.what() << "\n(run `tilesim help` for usage)\n";
    return static_cast<int>(ExitCode::bad_input);
  }

  if (*run_cmd) {
    if (*seed_opt) run.seed = seed;
    return run_command(run);
  }
  if (*machines_cmd) return machines_command(machines_json);
  if (*calibrate_cmd) return calibrate.ipu.empty() ? calibrate_command(calibrate) : calibrate_ipu_command(calibrate);
  if (*validate_cmd) {
    validate.plots = !validate_no_plots;
    return validate_command(validate);
  }
  // App::help() would describe the selected subcommand ("help" itself); ask for the top level.
  const std::string top_help = app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
  if (*help_cmd) {
    std::cout << top_help;
    return 0;
  }
  std::cerr << top_help;
  return static_cast<int>(ExitCode::bad_input);
}

}  // namespace tilesim::cli

int main(int argc, char** argv) {
  try {
    return tilesim::cli::dispatch(argc, argv);
  } catch (const tilesim::Error& e) {
    std::cerr << "tilesim: error: " << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    std::cerr << "tilesim: internal error: out of host memory\n";
    return static_cast<int>(tilesim::ExitCode::internal_error);
  } catch (const std::exception& e) {
    std::cerr << "tilesim: internal error: " << e.what() << "\n";
    return static_cast<int>(tilesim::ExitCode::internal_error);
  }
}
