#include "apps/sweep/rank_comm.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "mpi/world.hpp"

#ifdef TILESIM_HAVE_MPI
#include <mpi.h>
#endif

namespace tilesim::cli::sweep::ranks {

namespace {

bool several_ranks() { return mpi::world().active && mpi::world().size > 1; }

#ifdef TILESIM_HAVE_MPI
// Tests the request until it completes, sleeping between tests: 50 us at first (a collective whose
// ranks are all there completes at once), doubling to 20 ms (a rank waiting for a slow one wakes 50
// times a second and otherwise leaves its core alone).
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

void broadcast_bytes(void* data, int count, MPI_Datatype type) {
  MPI_Request request;
  MPI_Ibcast(data, count, type, 0, MPI_COMM_WORLD, &request);
  wait_quietly(request);
}

std::int64_t broadcast_count(std::int64_t count) {
  broadcast_bytes(&count, 1, MPI_INT64_T);
  return count;
}
#endif

}  // namespace

std::vector<std::int64_t> broadcast_from_root(const std::vector<std::int64_t>& values) {
  if (!several_ranks()) return values;
#ifdef TILESIM_HAVE_MPI
  std::vector<std::int64_t> out = values;
  out.resize(static_cast<std::size_t>(broadcast_count(static_cast<std::int64_t>(values.size()))));
  if (!out.empty()) broadcast_bytes(out.data(), static_cast<int>(out.size()), MPI_INT64_T);
  return out;
#endif
  return values;
}

std::string broadcast_from_root(const std::string& text) {
  if (!several_ranks()) return text;
#ifdef TILESIM_HAVE_MPI
  std::string out = text;
  out.resize(static_cast<std::size_t>(broadcast_count(static_cast<std::int64_t>(text.size()))));
  if (!out.empty()) broadcast_bytes(out.data(), static_cast<int>(out.size()), MPI_CHAR);
  return out;
#endif
  return text;
}

std::vector<std::vector<double>> gather_to_root(const std::vector<double>& values) {
  if (!several_ranks()) return {values};
#ifdef TILESIM_HAVE_MPI
  const int ranks = mpi::world().size;
  const bool root = mpi::world().rank == 0;
  std::vector<double> all(root ? values.size() * static_cast<std::size_t>(ranks) : 0);
  MPI_Request request;
  MPI_Igather(values.data(), static_cast<int>(values.size()), MPI_DOUBLE, all.data(), static_cast<int>(values.size()),
              MPI_DOUBLE, 0, MPI_COMM_WORLD, &request);
  wait_quietly(request);
  if (!root) return {};
  std::vector<std::vector<double>> out;
  for (int r = 0; r < ranks; ++r)
    out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(r * values.size()),
                     all.begin() + static_cast<std::ptrdiff_t>((r + 1) * values.size()));
  return out;
#endif
  return {values};
}

std::vector<std::string> gather_to_root(const std::string& text) {
  if (!several_ranks()) return {text};
#ifdef TILESIM_HAVE_MPI
  const int ranks = mpi::world().size;
  const bool root = mpi::world().rank == 0;
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(root ? static_cast<std::size_t>(ranks) : 0);
  MPI_Request request;
  MPI_Igather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD, &request);
  wait_quietly(request);
  std::vector<int> offsets(lengths.size(), 0);
  for (std::size_t r = 1; r < lengths.size(); ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
  std::string all(root ? static_cast<std::size_t>(offsets.back() + lengths.back()) : 0, '\0');
  MPI_Igatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD,
               &request);
  wait_quietly(request);
  if (!root) return {};
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lengths.size(); ++r)
    out.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return out;
#endif
  return {text};
}

}  // namespace tilesim::cli::sweep::ranks
