#pragma once
// The tilesim subcommands. Each returns the process exit code; errors are thrown as tilesim::Error
// and turned into exit codes by run_cli().
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/defaults.hpp"

namespace tilesim::cli {

struct RunArgs {
  std::string workload;
  std::string backends = "ipu,cpu";
  std::string out_dir;        // default out/<workload name>/
  bool json = false;
  std::string trace;
  bool timing_only = false;
  std::optional<std::uint64_t> seed;
  int warmup = defaults::warmup_calls;
  int repeats = defaults::timed_calls;
  std::optional<std::int64_t> steps;  // training workloads: overrides train.steps
  std::optional<std::int64_t> batches;  // workloads with a loader: overrides loader.batches (default one epoch)
  std::string available_memory_proportion;  // simulated IPU: every op's default proportion ("": the machine's)
};

struct ValidateArgs {
  std::string suite = "all";        // hydronet | layers | models | all
  std::string format = "text";      // text | markdown | latex (markdown and latex also go to validation.md / .tex)
  bool json = false;
  std::string out_dir;  // default out/validation/
  bool plots = true;
};

struct CalibrateArgs {
  std::string gpu;       // GPU machine name or file to fit
  std::string ipu;       // or an IPU machine name or file to fit
  std::string data_dir;  // default: the shipped validation/hydronet-gnn/a100/
  bool write = false;    // store the fitted figures in the machine file(s)
  bool json = false;
};

// tilesim sweep (docs/sweep-format.md).
struct SweepArgs {
  std::string sweep;            // the sweep file
  std::string out_dir;          // default out/<sweep name>/
  int jobs = 0;                 // worker processes for the simulated and modeled points; 0: the default (runs::sweep::SweepRequest)
  bool resume = false;          // skip points already in results.csv
  bool overwrite = false;       // start a new results.csv even if one exists
  std::optional<std::string> backends;  // --backends: replaces the sweep file's backends (comma-separated)
  bool verify = false;          // simulated IPU: functional runs, outputs checked
  std::int64_t stop_after = 0;  // for tests: stop (as if killed) after this many new points; 0: run all
  std::string available_memory_proportion;  // simulated IPU: every point's proportion ("": the machine's)
};

// tilesim calibrate: this host's ceilings into a CPU machine file.
struct HostCalibrateArgs {
  std::string out_path;  // default out/calibration/cpu.json
  bool json = false;
};

// tilesim roofline RESULTS.csv.
struct RooflineArgs {
  std::string results;
  std::vector<std::string> machines;  // FAMILY:NAME_OR_FILE (ipu:bow, gpu-model:a100-40gb, cpu:FILE)
  std::string out_dir;                // default: beside RESULTS.csv, in plots/
};

// tilesim plot surface RESULTS.csv.
struct SurfaceArgs {
  std::string results;
  std::vector<std::string> baselines, targets;  // backends of RESULTS.csv or hydronet reference CSVs / directories
  std::string x_column = "num_inputs";          // --x: the column across (analysis/speedup_axes.hpp)
  std::string y_column = "num_outputs";         // --y: the column up
  std::string average_over;                     // "", "num_features" (the default axes), "all" or columns
  std::string ops;                              // comma-separated; default: every op in the results
  std::string out_dir;                          // default: beside RESULTS.csv, in plots/
  double range = 0;                             // colour scale 1/range .. range; 0: from the data
};

// tilesim plot throughput RESULTS.csv (a batch-size sweep's).
struct ThroughputPlotArgs {
  std::string results;
  std::string out_dir;  // default: beside RESULTS.csv, in plots/
};

// tilesim plot scaling REPORT.json... (reports of workloads with a "parallel" section).
struct ScalingPlotArgs {
  std::vector<std::string> reports;
  std::string out_dir;  // default: beside the first report, in plots/
};

// tilesim report RESULTS.csv.
struct SpeedupReportArgs {
  std::string results;
  std::string format = "markdown";              // markdown | latex | csv
  std::vector<std::string> baselines, targets;  // default: every pair of backends in the results
  std::string ops;
};

// tilesim placement (docs/graph-format.md): the exchange of one message-passing step under three
// placements of node rows on the IPU's tiles.
struct PlacementArgs {
  std::string workload;             // a workload file with a "graph" object, or
  std::string graph;                // a preset name
  std::optional<std::int64_t> features;  // --features; else the graph object's (or preset's) num_features
  std::string dtype = "float32";
  std::string machine = "bow";
  bool symmetrize = false;          // symmetrise and deduplicate first (as models on directed graphs do)
  std::optional<std::uint64_t> seed;
  bool json = false;
};

// tilesim fit (docs/workload-format.md, "Mini-batches"): the largest batch of a loader workload whose
// inference and training steps fit the simulated IPU.
struct FitArgs {
  std::string workload;
  std::string backend = "ipu:bow";
  std::int64_t sample_batches = 4;  // batches made per candidate; the largest decides its fixed shape
  bool json = false;
};

int run_command(const RunArgs& args);
int fit_command(const FitArgs& args);
int placement_command(const PlacementArgs& args);
int sweep_command(const SweepArgs& args);
int host_calibrate_command(const HostCalibrateArgs& args);
int roofline_command(const RooflineArgs& args);
int plot_surface_command(const SurfaceArgs& args);
int plot_throughput_command(const ThroughputPlotArgs& args);
int plot_scaling_command(const ScalingPlotArgs& args);
int speedup_report_command(const SpeedupReportArgs& args);
int calibrate_command(const CalibrateArgs& args);
int validate_command(const ValidateArgs& args);
int machines_command(bool json);
int backends_command(bool json);
std::string version_text();
// A --seed as the workload reader accepts one (InputError naming --seed otherwise), so a report's seed
// always reproduces its run.
std::uint64_t checked_seed(std::int64_t seed);

// The command line: parses argv (argv[0] is the program name) and runs the subcommand. dispatch lets
// tilesim::Error through (and std::bad_alloc, std::exception); run_cli catches them, prints
// "tilesim: error: MESSAGE" on stderr and returns the exit code, checks that standard output was
// written, and is what the executable's main() returns.
int dispatch(int argc, char** argv);
int run_cli(int argc, char** argv);

}  // namespace tilesim::cli
