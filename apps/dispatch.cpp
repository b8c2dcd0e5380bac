// tilesim's command line (CLI11): parses arguments, calls the commands, and (run_cli) maps errors to exit
// codes: 0 success, 1 internal error, 2 bad input (usage, workload, machine or index file), 3 does not fit.
// A library function, so that the executable (main.cpp) and the Python module (python/) share it.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <new>

#include <CLI/CLI.hpp>
#include <omp.h>

#include "apps/cli_checks.hpp"
#include "apps/commands.hpp"
#include "backends/machine_ceilings.hpp"
#include "backends/registry.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/tool_identity.hpp"
#include "sim/version.hpp"

namespace tilesim::cli {

std::string version_text() {
  return std::string("tilesim ") + TILESIM_VERSION + ", revision " + tool_revision() + " (SystemC " + sim::systemc_version() + ", OpenMP " +
         std::to_string(_OPENMP) + ", " + std::to_string(omp_get_max_threads()) +
         " threads; backends: " + backends::version_summary() + ")";
}

std::uint64_t checked_seed(std::int64_t seed) {
  return static_cast<std::uint64_t>(limits::checked_option("--seed", seed, 0, limits::max_seed));
}

int dispatch(int argc, char** argv) {
  CLI::App app{"tilesim: how fast would gather/scatter and GNN workloads run on a tile-based IPU-class processor, "
               "against real CPU kernels, and why.",
               "tilesim"};
  app.set_version_flag("--version", version_text());
  app.require_subcommand(0, 1);

  RunArgs run;
  std::int64_t seed = 0;
  auto* run_cmd = app.add_subcommand("run", "Run a workload on the chosen backends and write report.json");
  run_cmd->add_option("workload", run.workload, "Workload JSON file (format: docs/workload-format.md)")->required();
  run_cmd->add_option("--backends", run.backends, backends::backends_help_text())->capture_default_str();
  run_cmd->add_option("--out", run.out_dir, "Directory for report.json (default out/<workload name>/)")
      ->check(non_empty_path("a directory"));
  run_cmd->add_flag("--json", run.json, "Print the report JSON on stdout instead of the table");
  run_cmd->add_option("--trace", run.trace, "Write a Chrome/Perfetto trace of the simulated run to this file")
      ->check(non_empty_path("a file"));
  run_cmd->add_flag("--timing-only", run.timing_only, "Simulate cycles without moving real bytes (outputs not verified)");
  auto* seed_opt = run_cmd->add_option("--seed", seed, "Override the workload's random seed")->check(integer_in(0, limits::max_seed));
  run_cmd->add_option("--warmup", run.warmup, "Untimed calls before timing measured backends")
      ->check(integer_in(0, limits::max_warmup_calls))
      ->capture_default_str();
  run_cmd->add_option("--repeats", run.repeats, "Timed calls of measured backends (median reported)")
      ->check(integer_in(1, limits::max_timed_calls))
      ->capture_default_str();
  std::int64_t steps = 0;
  auto* steps_opt = run_cmd->add_option("--steps", steps, "Training workloads: steps to run (overrides the workload's train.steps)")
                        ->check(integer_in(1, limits::max_steps));
  std::int64_t batches = 0;
  auto* batches_opt = run_cmd->add_option("--batches", batches,
                                          "Workloads with a loader: batches to run, one step each (overrides loader.batches; default one epoch)")
                          ->check(integer_in(1, limits::max_steps));
  run_cmd->add_option("--available-memory-proportion", run.available_memory_proportion,
                      "Simulated IPU: share of a tile's SRAM, in (0, 1], each op's plan may use for temporaries (PopTorch's "
                      "setAvailableMemoryProportion; an op's own available_memory_proportion wins; default the machine file's)");

  bool machines_json = false;
  auto* machines_cmd = app.add_subcommand("machines", "List the machine files and their key figures");
  machines_cmd->add_flag("--json", machines_json, "Print JSON");

  bool backends_json = false;
  auto* backends_cmd = app.add_subcommand(
      "backends", "List the backend families: names, kind, modes, machines, and whether each is built in (and why not)");
  backends_cmd->add_flag("--json", backends_json, "Print JSON");

  ValidateArgs validate;
  auto* validate_cmd = app.add_subcommand(
      "validate", "Run the validation suites through the models; write validation.json, points.csv and plots");
  validate_cmd->add_option("--suite", validate.suite,
                           "Validation suite: hydronet (measured single ops), layers, models (published figures) or all")
      ->capture_default_str();
  validate_cmd->add_option("--format", validate.format,
                           "Tables as text, markdown or latex (markdown and latex are also written to validation.md / validation.tex)")
      ->capture_default_str();
  validate_cmd->add_flag("--json", validate.json, "Print validation.json on stdout instead of the table");
  validate_cmd->add_option("--out", validate.out_dir, "Output directory (default out/validation/)")
      ->check(non_empty_path("a directory"));
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

  SweepArgs sweep;
  auto* sweep_cmd = app.add_subcommand(
      "sweep", "Run every point of a sweep file on its backends, appending each to results.csv (docs/sweep-format.md)");
  sweep_cmd->add_option("sweep", sweep.sweep, "Sweep JSON file (format: docs/sweep-format.md)")->required();
  sweep_cmd->add_option("--out", sweep.out_dir, "Directory for results.csv and sweep.json (default out/<sweep name>/)")
      ->check(non_empty_path("a directory"));
  sweep_cmd->add_option("--jobs", sweep.jobs,
                        "Worker processes for the simulated and modeled points (each its own simulator); measured CPU "
                        "points always run alone")
      ->check(integer_in(1, limits::max_jobs))
      ->capture_default_str();
  sweep_cmd->add_flag("--resume", sweep.resume, "Continue results.csv: run only the points not yet in it");
  sweep_cmd->add_flag("--overwrite", sweep.overwrite, "Start a new results.csv even if one exists");
  std::string sweep_backends;
  auto* sweep_backends_opt =
      sweep_cmd->add_option("--backends", sweep_backends, "Comma-separated backends replacing the sweep file's (full grid each)");
  sweep_cmd->add_flag("--verify", sweep.verify, "Simulated IPU: functional runs with outputs checked, instead of timing-only");
  sweep_cmd->add_option("--available-memory-proportion", sweep.available_memory_proportion,
                        "Simulated IPU: share of a tile's SRAM, in (0, 1], each point's plan may use for temporaries "
                        "(default the machine file's)");
  // For tests: stop as if killed after N new points (group "" hides it from the help).
  sweep_cmd->add_option("--stop-after", sweep.stop_after, "Stop after N new points")
      ->check(integer_in(0, std::numeric_limits<std::int64_t>::max()))
      ->group("");

  HostCalibrateArgs host_calibrate;
  auto* host_calibrate_cmd = app.add_subcommand(
      "calibrate", "Measure this host's ceilings (bandwidths, peak FLOP/s per dtype) into a CPU machine file");
  host_calibrate_cmd->add_option("--out", host_calibrate.out_path, "CPU machine file to write (default out/calibration/cpu.json)")
      ->check(non_empty_path("a file"));
  host_calibrate_cmd->add_flag("--json", host_calibrate.json, "Print the machine file on stdout");

  RooflineArgs roofline;
  auto* roofline_cmd = app.add_subcommand("roofline", "Roofline and bandwidth plots of a results.csv with each machine's ceilings");
  roofline_cmd->add_option("results", roofline.results, "results.csv written by tilesim sweep")->required();
  std::string machine_forms;
  for (const auto& form : backends::roofline_machine_forms()) machine_forms += (machine_forms.empty() ? "" : ", ") + form;
  roofline_cmd->add_option("--machine", roofline.machines,
                           "Machine for a backend family: " + machine_forms + " (default: the backend's own machine; cpu: " +
                               backends::default_cpu_machine_file() + ")");
  roofline_cmd->add_option("--out", roofline.out_dir, "Directory for the plots (default: plots/ beside the results)")
      ->check(non_empty_path("a directory"));

  auto* plot_cmd = app.add_subcommand("plot", "Plots of a results.csv");
  plot_cmd->require_subcommand(1);
  SurfaceArgs surface;
  auto* surface_cmd = plot_cmd->add_subcommand(
      "surface", "Heat map and 3D surface of the target's speedup over the baseline over (num_inputs x num_outputs)");
  surface_cmd->add_option("results", surface.results, "results.csv written by tilesim sweep")->required();
  surface_cmd->add_option("--baseline", surface.baselines,
                          "Backend of the results, or a hydronet reference CSV file or directory (repeatable)")
      ->required();
  surface_cmd->add_option("--target", surface.targets, "Backend of the results, or a hydronet reference (repeatable)")->required();
  surface_cmd->add_option("--average-over", surface.average_over, "num_features: one panel of geometric-mean speedups");
  surface_cmd->add_option("--ops", surface.ops, "Comma-separated ops (default: every op of the results)");
  surface_cmd->add_option("--out", surface.out_dir, "Directory for the plots (default: plots/ beside the results)")
      ->check(non_empty_path("a directory"));
  surface_cmd->add_option("--range", surface.range, "Colour scale from 1/R to R (default: from the data)")->check(number_in(1.5, 1e6));
  ThroughputPlotArgs throughput;
  auto* throughput_cmd = plot_cmd->add_subcommand(
      "throughput", "Throughput versus batch size of a batch-size sweep's results.csv, one line per backend (log-log)");
  throughput_cmd->add_option("results", throughput.results, "results.csv written by tilesim sweep on a batch-size sweep file")->required();
  throughput_cmd->add_option("--out", throughput.out_dir, "Directory for the plots (default: plots/ beside the results)")
      ->check(non_empty_path("a directory"));
  ScalingPlotArgs scaling;
  auto* scaling_cmd = plot_cmd->add_subcommand(
      "scaling", "Throughput versus chips (one line per system) and pipelined step time versus micro-batches, from scaling reports");
  scaling_cmd->add_option("reports", scaling.reports, "report.json files of tilesim run on workloads with a \"parallel\" section")->required();
  scaling_cmd->add_option("--out", scaling.out_dir, "Directory for the plots (default: plots/ beside the first report)")
      ->check(non_empty_path("a directory"));

  SpeedupReportArgs report;
  auto* report_cmd = app.add_subcommand("report", "Speedup tables (median, range, crossover) of a results.csv");
  report_cmd->add_option("results", report.results, "results.csv written by tilesim sweep")->required();
  report_cmd->add_option("--format", report.format, "markdown, latex, csv or summary (a few lines)")->capture_default_str();
  report_cmd->add_option("--baseline", report.baselines, "Backend or hydronet reference (repeatable; default: every pair)");
  report_cmd->add_option("--target", report.targets, "Backend or hydronet reference (repeatable)");
  report_cmd->add_option("--ops", report.ops, "Comma-separated ops (default: every op of the results)");

  FitArgs fit;
  auto* fit_cmd = app.add_subcommand(
      "fit", "The largest batch of a mini-batch workload whose inference and training steps fit the simulated IPU's tiles");
  fit_cmd->add_option("workload", fit.workload, "Workload JSON file with a \"loader\" (docs/workload-format.md)")->required();
  fit_cmd->add_option("--backend", fit.backend, "The simulated IPU: ipu:bow, ipu:bow-2000, ipu:mk2, ... or ipu:FILE")->capture_default_str();
  fit_cmd->add_option("--sample-batches", fit.sample_batches,
                      "Batches made per candidate size; the largest sets its fixed shape")
      ->check(integer_in(1, limits::max_steps))
      ->capture_default_str();
  fit_cmd->add_flag("--json", fit.json, "Print the answer as JSON");

  PlacementArgs placement;
  std::int64_t placement_seed = 0;
  auto* placement_cmd = app.add_subcommand(
      "placement", "Exchange of one message-passing step under linear, RCM and METIS placements of node rows on the IPU");
  placement_cmd->add_option("workload", placement.workload, "Workload JSON file with a \"graph\" object (docs/graph-format.md)");
  placement_cmd->add_option("--graph", placement.graph, "A graph preset instead (cora, pubmed, ogbn-arxiv, ...)");
  std::int64_t placement_features = 0;
  auto* placement_features_opt =
      placement_cmd->add_option("--features", placement_features, "Feature width (default: the graph's num_features)")
          ->check(integer_in(1, limits::max_size, "a feature width"));
  placement_cmd->add_option("--dtype", placement.dtype, "Feature dtype: float32, float16 or bfloat16")->capture_default_str();
  placement_cmd->add_option("--machine", placement.machine, "IPU machine: bow, mk2, mk1 or a machine file")->capture_default_str();
  placement_cmd->add_flag("--symmetrize", placement.symmetrize, "Symmetrise and deduplicate the graph first");
  auto* placement_seed_opt = placement_cmd->add_option("--seed", placement_seed, "Graph seed (default: the workload's, or 0)")
                                 ->check(integer_in(0, limits::max_seed));
  placement_cmd->add_flag("--json", placement.json, "Print JSON");

  auto* help_cmd = app.add_subcommand("help", "Show this help");

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "tilesim: error: " << e.what() << "\n(run `tilesim help` for usage)\n";
    return static_cast<int>(ExitCode::bad_input);
  }

  if (*fit_cmd) return fit_command(fit);
  if (*run_cmd) {
    if (*seed_opt) run.seed = checked_seed(seed);
    if (*steps_opt) run.steps = steps;
    if (*batches_opt) run.batches = batches;
    return run_command(run);
  }
  if (*machines_cmd) return machines_command(machines_json);
  if (*backends_cmd) return backends_command(backends_json);
  if (*placement_cmd) {
    if (*placement_seed_opt) placement.seed = checked_seed(placement_seed);
    if (*placement_features_opt) placement.features = placement_features;
    return placement_command(placement);
  }
  if (*calibrate_cmd) return calibrate.ipu.empty() ? calibrate_command(calibrate) : calibrate_ipu_command(calibrate);
  if (*validate_cmd) {
    validate.plots = !validate_no_plots;
    return validate_command(validate);
  }
  if (*sweep_cmd) {
    if (*sweep_backends_opt) sweep.backends = sweep_backends;  // given, even if empty (then refused)
    return sweep_command(sweep);
  }
  if (*host_calibrate_cmd) return host_calibrate_command(host_calibrate);
  if (*roofline_cmd) return roofline_command(roofline);
  if (*surface_cmd) return plot_surface_command(surface);
  if (*throughput_cmd) return plot_throughput_command(throughput);
  if (*scaling_cmd) return plot_scaling_command(scaling);
  if (*report_cmd) return speedup_report_command(report);
  // App::help() would describe the selected subcommand ("help" itself); ask for the top level.
  const std::string top_help = app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
  if (*help_cmd) {
    std::cout << top_help;
    return 0;
  }
  std::cerr << top_help;
  return static_cast<int>(ExitCode::bad_input);
}

int run_cli(int argc, char** argv) {
  try {
    const int code = dispatch(argc, argv);
    // What went to standard output must have arrived (a full disk, a closed pipe): a table or JSON
    // that was cut short is a failure, not a success.
    std::cout.flush();
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
      std::cerr << "tilesim: error: could not write standard output" << (errno ? std::string(" (") + std::strerror(errno) + ")" : "")
                << "; what was printed is incomplete\n";
      return static_cast<int>(ExitCode::internal_error);
    }
    return code;
  } catch (const Error& e) {
    std::cerr << "tilesim: error: " << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    std::cerr << "tilesim: internal error: out of host memory\n";
    return static_cast<int>(ExitCode::internal_error);
  } catch (const std::exception& e) {
    std::cerr << "tilesim: internal error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::internal_error);
  }
}

}  // namespace tilesim::cli
