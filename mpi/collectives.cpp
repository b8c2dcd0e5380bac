#include "mpi/collectives.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "mpi/checked_call.hpp"

namespace tilesim::mpi {

namespace {

#ifdef TILESIM_HAVE_MPI
// Tests the request until it completes, napping between tests (collectives.hpp, "Quiet calls"): a
// rank waiting for a slow one wakes 50 times a second and otherwise leaves its core alone.
void wait_quietly(MPI_Request& request) {
  auto nap = std::chrono::microseconds(50);
  for (;;) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(nap);
    nap = std::min<std::chrono::microseconds>(nap * 2, std::chrono::milliseconds(20));
  }
}

void ibcast_from_root(void* data, int count, MPI_Datatype type) {
  MPI_Request request;
  MPI_Ibcast(data, count, type, 0, MPI_COMM_WORLD, &request);
  wait_quietly(request);
}

void igather_to_root(const void* values, int count, void* all, MPI_Datatype type) {
  MPI_Request request;
  MPI_Igather(values, count, type, all, count, type, 0, MPI_COMM_WORLD, &request);
  wait_quietly(request);
}
#else
[[noreturn]] void no_mpi(const char* what) {
  throw std::logic_error(std::string("mpi::") + what + ": this tilesim was built without MPI");
}
#endif

}  // namespace

void broadcast_bytes(std::byte* data, std::int64_t bytes, int root) {
#ifdef TILESIM_HAVE_MPI
  for (std::int64_t done = 0; done < bytes; done += max_message_bytes) {
    const auto n = static_cast<int>(std::min(max_message_bytes, bytes - done));
    check_mpi(MPI_Bcast(data + done, n, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
  }
#else
  (void)data, (void)bytes, (void)root;
  no_mpi("broadcast_bytes");
#endif
}

void broadcast_int64s(std::int64_t* values, int count, int root) {
#ifdef TILESIM_HAVE_MPI
  check_mpi(MPI_Bcast(values, count, MPI_INT64_T, root, MPI_COMM_WORLD), "MPI_Bcast");
#else
  (void)values, (void)count, (void)root;
  no_mpi("broadcast_int64s");
#endif
}

int min_over_ranks(int value) {
#ifdef TILESIM_HAVE_MPI
  int least = value;
  check_mpi(MPI_Allreduce(&value, &least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  return least;
#else
  (void)value;
  no_mpi("min_over_ranks");
#endif
}

void broadcast_from_root_quietly(std::int64_t* values, int count) {
#ifdef TILESIM_HAVE_MPI
  ibcast_from_root(values, count, MPI_INT64_T);
#else
  (void)values, (void)count;
  no_mpi("broadcast_from_root_quietly");
#endif
}

void broadcast_from_root_quietly(char* text, int count) {
#ifdef TILESIM_HAVE_MPI
  ibcast_from_root(text, count, MPI_CHAR);
#else
  (void)text, (void)count;
  no_mpi("broadcast_from_root_quietly");
#endif
}

void gather_to_root_quietly(const double* values, int count, double* all) {
#ifdef TILESIM_HAVE_MPI
  igather_to_root(values, count, all, MPI_DOUBLE);
#else
  (void)values, (void)count, (void)all;
  no_mpi("gather_to_root_quietly");
#endif
}

void gather_to_root_quietly(const int* values, int count, int* all) {
#ifdef TILESIM_HAVE_MPI
  igather_to_root(values, count, all, MPI_INT);
#else
  (void)values, (void)count, (void)all;
  no_mpi("gather_to_root_quietly");
#endif
}

void gather_to_root_quietly(const char* text, int count, char* all, const int* counts, const int* offsets) {
#ifdef TILESIM_HAVE_MPI
  MPI_Request request;
  MPI_Igatherv(text, count, MPI_CHAR, all, counts, offsets, MPI_CHAR, 0, MPI_COMM_WORLD, &request);
  wait_quietly(request);
#else
  (void)text, (void)count, (void)all, (void)counts, (void)offsets;
  no_mpi("gather_to_root_quietly");
#endif
}

}  // namespace tilesim::mpi
