#include "mpi/point_to_point.hpp"

#include <algorithm>
#include <stdexcept>

#include "mpi/checked_call.hpp"

namespace tilesim::mpi {

void exchange_bytes(const std::byte* send, const std::vector<std::int64_t>& send_bytes, std::byte* receive,
                    const std::vector<std::int64_t>& receive_bytes, int tag) {
#ifdef TILESIM_HAVE_MPI
  std::vector<MPI_Request> requests;
  // Receives first, so that every send finds its receive posted.
  std::int64_t offset = 0;
  for (std::size_t q = 0; q < receive_bytes.size(); ++q) {
    for (std::int64_t done = 0; done < receive_bytes[q]; done += max_message_bytes) {
      const auto n = static_cast<int>(std::min(max_message_bytes, receive_bytes[q] - done));
      requests.emplace_back();
      check_mpi(MPI_Irecv(receive + offset + done, n, MPI_BYTE, static_cast<int>(q), tag, MPI_COMM_WORLD, &requests.back()),
                "MPI_Irecv");
    }
    offset += receive_bytes[q];
  }
  offset = 0;
  for (std::size_t q = 0; q < send_bytes.size(); ++q) {
    for (std::int64_t done = 0; done < send_bytes[q]; done += max_message_bytes) {
      const auto n = static_cast<int>(std::min(max_message_bytes, send_bytes[q] - done));
      requests.emplace_back();
      check_mpi(MPI_Isend(send + offset + done, n, MPI_BYTE, static_cast<int>(q), tag, MPI_COMM_WORLD, &requests.back()),
                "MPI_Isend");
    }
    offset += send_bytes[q];
  }
  if (!requests.empty()) {
    check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  }
#else
  (void)send, (void)send_bytes, (void)receive, (void)receive_bytes, (void)tag;
  throw std::logic_error("mpi::exchange_bytes: this tilesim was built without MPI");
#endif
}

}  // namespace tilesim::mpi
