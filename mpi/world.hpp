#pragma once
// The MPI world tilesim runs in. `mpirun -n K tilesim ...` starts K ranks; tilesim initialises MPI only
// when it was built with MPI (CMake found it: TILESIM_HAVE_MPI) and the process was started by an MPI
// launcher (the launcher's rank variables are set). Otherwise it is a world of one rank, and no MPI
// call is made, so the tool starts as fast as ever and runs on hosts with no MPI installed.
#include <cstdint>
#include <string>

namespace tilesim::mpi {

struct World {
  int rank = 0;
  int size = 1;
  bool active = false;  // MPI is initialised (size may still be 1 under `mpirun -n 1`)
};

// The world, initialising MPI on the first call where it applies (MPI_THREAD_FUNNELED: only the thread
// that called this makes MPI calls). MPI_Finalize runs at normal process exit.
const World& world();

// Whether this build has MPI at all.
bool built_with_mpi();

// Whether an MPI launcher started this process (its rank variables are set), whatever the build.
bool launched_by_mpi();

// Ends every rank of the job at once with `exit_code` (MPI_Abort) when MPI is active, so that a rank
// that fails does not leave the others waiting in a collective; std::exit otherwise.
[[noreturn]] void abort_all(int exit_code);

// "rank R of K" for messages ("" in a world of one).
std::string rank_label();

// The sum of `value` over every rank of the job (each rank must call it, in the same order as its other
// collective calls); `value` itself in a world of one.
std::int64_t sum_over_ranks(std::int64_t value);

// Called by a rank that met an error: whether every rank of the job met one too, within `timeout_s` (they
// meet at a barrier of their own communicator, kept for this alone, so it cannot be confused with a
// collective the others are in). True in a world of one. A rank that failed alone gets false once the
// time is up, and should end the job (abort_all): the others would wait for it for ever.
bool every_rank_failed(double timeout_s);

}  // namespace tilesim::mpi
