#include "mpi/world.hpp"

#include <cstdlib>

#include <chrono>
#include <thread>

#ifdef TILESIM_HAVE_MPI
#include <mpi.h>
#endif

namespace tilesim::mpi {

namespace {

#ifdef TILESIM_HAVE_MPI
// The communicator of every_rank_failed's barrier (a duplicate of MPI_COMM_WORLD).
MPI_Comm failure_comm = MPI_COMM_NULL;

void finalize_at_exit() {
  int initialised = 0;
  int finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  if (initialised && !finalised) MPI_Finalize();
}
#endif

World make_world() {
  World w;
#ifdef TILESIM_HAVE_MPI
  if (!launched_by_mpi()) return w;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  std::atexit(finalize_at_exit);
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  MPI_Comm_dup(MPI_COMM_WORLD, &failure_comm);
  w.active = true;
#endif
  return w;
}

}  // namespace

bool built_with_mpi() {
#ifdef TILESIM_HAVE_MPI
  return true;
#else
  return false;
#endif
}

bool launched_by_mpi() {
  // Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE; PMIx-based launchers set PMIX_RANK; MPICH's PMI_RANK.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

const World& world() {
  static const World w = make_world();
  return w;
}

void abort_all(int exit_code) {
#ifdef TILESIM_HAVE_MPI
  if (world().active && world().size > 1) MPI_Abort(MPI_COMM_WORLD, exit_code);
#endif
  std::exit(exit_code);
}

std::string rank_label() {
  const World& w = world();
  if (w.size <= 1) return "";
  return "rank " + std::to_string(w.rank) + " of " + std::to_string(w.size);
}

std::int64_t sum_over_ranks(std::int64_t value) {
#ifdef TILESIM_HAVE_MPI
  if (world().active && world().size > 1) {
    std::int64_t total = 0;
    MPI_Allreduce(&value, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return total;
  }
#endif
  return value;
}

bool every_rank_failed(double timeout_s) {
#ifdef TILESIM_HAVE_MPI
  if (!world().active || world().size < 2) return true;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibarrier(failure_comm, &request);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;  // the request is left: the job ends
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
#else
  (void)timeout_s;
  return true;
#endif
}

}  // namespace tilesim::mpi
