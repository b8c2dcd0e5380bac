#pragma once
// `mpirun -n K tilesim sweep SWEEP.json --out DIR` with K > 1 (docs/sweep-format.md, "Sweeps over MPI
// ranks"): rank 0 owns the folder (its lock, sweep.json, machines.json, results.csv) and decides which
// points are still to run; every rank runs an interleaved share of the simulated and modeled ones
// (rank_share.hpp), appending each row to its own rank file (rank_files.hpp); when every rank is done,
// rank 0 merges the rank files into results.csv, then times the measured points itself, alone on the
// host, and prints the summary of the whole job. A rank that fails ends the job (MPI_Abort) with the
// error's exit code and a message naming it; the rows every rank finished stay in its rank file, and
// --resume (with any number of ranks, or none) merges them.
#include <optional>

#include "runs/sweep/sweep_request.hpp"

namespace tilesim::runs::sweep {

// The sweep over the ranks of the MPI world (which has more than one).
int mpi_sweep_command(const SweepRequest& args);

// An MPI launcher started this tilesim, built without MPI, on more than one rank: each would run the
// whole sweep into one folder. The launcher's rank 0 throws InputError (exit 2) saying so; the others
// return 2 without a word. Nothing (go on) under a launcher of one rank.
std::optional<int> refuse_ranks_without_mpi();

}  // namespace tilesim::runs::sweep
