#pragma once
// The steps every sweep of op points takes before its first point, shared by the one-process sweep
// (sweep_command.cpp) and the sweep over MPI ranks (mpi_sweep.cpp): the sweep resolved from its file
// and the command line (no file of the output folder touched), then the output folder taken and made
// ready (lock, --resume checks, rank files an earlier run left, results.csv, sweep.json, machines.json).
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runs/sweep/output_lock.hpp"
#include "runs/sweep/results_file.hpp"
#include "runs/sweep/sweep_backends.hpp"
#include "runs/sweep/sweep_plan.hpp"
#include "runs/sweep/sweep_request.hpp"
#include "workloads/sweep_points.hpp"
#include "workloads/sweep_spec.hpp"

namespace tilesim::runs::sweep {

struct ResolvedSweep {
  analysis::SweepSpec spec;
  std::optional<double> proportion;       // --available-memory-proportion
  std::vector<SweepBackendRun> backends;  // made, in the sweep's order
  std::vector<std::string> names;         // their canonical names
  nlohmann::json resolved;                // the resolved sweep: sweep.json's body, --resume's identity
  analysis::SweepPoints points;           // every point, in sweep order (decoded on demand)
};

// --jobs, --stop-after, --resume with --overwrite: InputError when out of range or contradictory.
void check_sweep_arguments(const SweepRequest& args);

// Parses and checks the sweep file `document` with the command line applied; makes the backends.
// Throws InputError for bad input. Reads no file of the output folder.
ResolvedSweep resolve_sweep(const SweepRequest& args, const nlohmann::json& document);

// A row's place in sweep order (its SweepPoints index), or nothing when it is no point of the sweep.
std::optional<std::size_t> sweep_position(const ResolvedSweep& sweep, const analysis::ResultRow& row);

struct SweepFolder {
  std::string out_dir;
  std::string csv_path;
  std::unique_ptr<OutputLock> lock;      // held until the sweep ends
  std::unique_ptr<ResultsFile> results;  // results.csv, open for appending
  PendingPoints pending;                 // the points not yet in results.csv
};

// Takes the output folder (its lock) and makes it ready: with --resume, checks it holds this sweep
// and merges the rank files an earlier sweep over MPI ranks left (rank_files.hpp) into results.csv;
// with --overwrite, removes them; with neither, refuses a folder with results.csv or rank files.
// Then starts or continues results.csv, writes sweep.json (recording `ranks`) and machines.json, and
// prints the plan. Throws InputError (exit 2) for a folder it must not write.
SweepFolder open_folder(const SweepRequest& args, const ResolvedSweep& sweep, int ranks);

}  // namespace tilesim::runs::sweep
