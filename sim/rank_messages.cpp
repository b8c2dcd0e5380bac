#include "sim/rank_messages.hpp"

#include <stdexcept>
#include <string>

#include "mpi/collectives.hpp"
#include "mpi/point_to_point.hpp"
#include "mpi/world.hpp"

namespace tilesim::sim::rank_messages {

namespace {

// One tag for the engine's point-to-point traffic, apart from any other user of MPI_COMM_WORLD.
constexpr int exchange_tag = 7401;

// Before any MPI call: built without MPI, the engine never spreads, so a call here is a bug.
void require_mpi(const char* what) {
  if (!mpi::built_with_mpi()) {
    throw std::logic_error(std::string("rank_messages::") + what + ": this tilesim was built without MPI, so the engine never spreads over ranks");
  }
}

}  // namespace

void exchange(const std::byte* send, const std::vector<std::int64_t>& send_bytes, std::byte* receive,
              const std::vector<std::int64_t>& receive_bytes) {
  require_mpi("exchange");
  mpi::exchange_bytes(send, send_bytes, receive, receive_bytes, exchange_tag);
}

void broadcast(std::byte* data, std::int64_t bytes, std::int32_t root) {
  require_mpi("broadcast");
  mpi::broadcast_bytes(data, bytes, root);
}

std::int32_t lowest_failed_rank(bool failed_here) {
  require_mpi("lowest_failed_rank");
  const int size = mpi::world().size;
  // A rank that did not fail offers `size`, which no failed rank's number reaches.
  const int lowest = mpi::min_over_ranks(failed_here ? mpi::world().rank : size);
  return lowest < size ? lowest : -1;
}

void broadcast_failure(std::string& what, int& code, std::int32_t root) {
  require_mpi("broadcast_failure");
  std::int64_t header[2] = {static_cast<std::int64_t>(what.size()), code};
  mpi::broadcast_int64s(header, 2, root);
  what.resize(static_cast<std::size_t>(header[0]));
  code = static_cast<int>(header[1]);
  broadcast(reinterpret_cast<std::byte*>(what.data()), header[0], root);
}

}  // namespace tilesim::sim::rank_messages
