#pragma once
// Bytes between pairs of ranks of the MPI world (mpi/world.hpp), every pair at once: what the engine
// spread over ranks sends at an exchange phase (sim/rank_messages.hpp). Built without MPI this throws
// std::logic_error: a world of one has no other rank to send to.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tilesim::mpi {

// This rank sends send_bytes[q] bytes to rank q (packed one after another in `send`, by rank) and
// receives receive_bytes[q] bytes from rank q (into `receive`, by rank, in the same way), all on `tag`;
// returns when every message is done. A count of zero sends or receives nothing. Throws
// std::runtime_error naming the MPI call that failed.
void exchange_bytes(const std::byte* send, const std::vector<std::int64_t>& send_bytes, std::byte* receive,
                    const std::vector<std::int64_t>& receive_bytes, int tag);

}  // namespace tilesim::mpi
