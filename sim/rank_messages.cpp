#include "sim/rank_messages.hpp"

#include <algorithm>
#include <stdexcept>

#ifdef TILESIM_HAVE_MPI
#include <mpi.h>
#endif

namespace tilesim::sim::rank_messages {

namespace {

#ifdef TILESIM_HAVE_MPI
// MPI counts are ints: a message longer than this goes as several, in order (MPI keeps the order of
// messages between two ranks on one tag).
constexpr std::int64_t max_message_bytes = std::int64_t{1} << 30;

void check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed with code " + std::to_string(code));
}

// One tag for the engine's point-to-point traffic, apart from any other user of MPI_COMM_WORLD.
constexpr int exchange_tag = 7401;
#else
[[noreturn]] void no_mpi(const char* what) {
  throw std::logic_error(std::string("rank_messages::") + what + ": this tilesim was built without MPI, so the engine never spreads over ranks");
}
#endif

}  // namespace

void exchange(const std::byte* send, const std::vector<std::int64_t>& send_bytes, std::byte* receive,
              const std::vector<std::int64_t>& receive_bytes) {
#ifdef TILESIM_HAVE_MPI
  std::vector<MPI_Request> requests;
  // Receives first, so that every send finds its receive posted.
  std::int64_t offset = 0;
  for (std::size_t q = 0; q < receive_bytes.size(); ++q) {
    for (std::int64_t done = 0; done < receive_bytes[q]; done += max_message_bytes) {
      const auto n = static_cast<int>(std::min(max_message_bytes, receive_bytes[q] - done));
      requests.emplace_back();
      check(MPI_Irecv(receive + offset + done, n, MPI_BYTE, static_cast<int>(q), exchange_tag, MPI_COMM_WORLD, &requests.back()),
            "MPI_Irecv");
    }
    offset += receive_bytes[q];
  }
  offset = 0;
  for (std::size_t q = 0; q < send_bytes.size(); ++q) {
    for (std::int64_t done = 0; done < send_bytes[q]; done += max_message_bytes) {
      const auto n = static_cast<int>(std::min(max_message_bytes, send_bytes[q] - done));
      requests.emplace_back();
      check(MPI_Isend(send + offset + done, n, MPI_BYTE, static_cast<int>(q), exchange_tag, MPI_COMM_WORLD, &requests.back()),
            "MPI_Isend");
    }
    offset += send_bytes[q];
  }
  if (!requests.empty()) {
    check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  }
#else
  (void)send, (void)send_bytes, (void)receive, (void)receive_bytes;
  no_mpi("exchange");
#endif
}

void broadcast(std::byte* data, std::int64_t bytes, std::int32_t root) {
#ifdef TILESIM_HAVE_MPI
  for (std::int64_t done = 0; done < bytes; done += max_message_bytes) {
    const auto n = static_cast<int>(std::min(max_message_bytes, bytes - done));
    check(MPI_Bcast(data + done, n, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
  }
#else
  (void)data, (void)bytes, (void)root;
  no_mpi("broadcast");
#endif
}

std::int32_t lowest_failed_rank(bool failed_here) {
#ifdef TILESIM_HAVE_MPI
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // A rank that did not fail offers `size`, which no failed rank's number reaches.
  const int mine = failed_here ? rank : size;
  int lowest = size;
  check(MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  return lowest < size ? lowest : -1;
#else
  (void)failed_here;
  no_mpi("lowest_failed_rank");
#endif
}

void broadcast_failure(std::string& what, int& code, std::int32_t root) {
#ifdef TILESIM_HAVE_MPI
  std::int64_t header[2] = {static_cast<std::int64_t>(what.size()), code};
  check(MPI_Bcast(header, 2, MPI_INT64_T, root, MPI_COMM_WORLD), "MPI_Bcast");
  what.resize(static_cast<std::size_t>(header[0]));
  code = static_cast<int>(header[1]);
  broadcast(reinterpret_cast<std::byte*>(what.data()), header[0], root);
#else
  (void)what, (void)code, (void)root;
  no_mpi("broadcast_failure");
#endif
}

}  // namespace tilesim::sim::rank_messages
