#pragma once
// The bytes that move between MPI ranks when the engine is spread over them (sim/rank_partition.hpp):
// an exchange phase's copies that cross a rank boundary, the host's reads of tensors other ranks hold,
// and the agreement on whether a vertex body failed anywhere. Each call is made by every rank of the
// job in the same order (every rank runs the same program), so nothing here names a call site.
// Built without MPI, the engine never spreads, and these throw std::logic_error if called.
// Engine-internal.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tilesim::sim::rank_messages {

// This rank sends send_bytes[q] bytes to rank q (packed one after another in `send`, by rank) and
// receives receive_bytes[q] from rank q (into `receive`, by rank, in the same way). The counts are what
// both sides computed from the same program: a pair with nothing to move exchanges no message.
void exchange(const std::byte* send, const std::vector<std::int64_t>& send_bytes, std::byte* receive,
              const std::vector<std::int64_t>& receive_bytes);

// Every rank's bytes [0, bytes) of `data` replaced by those of rank `root`.
void broadcast(std::byte* data, std::int64_t bytes, std::int32_t root);

// The lowest rank whose `failed_here` is true, or -1 when none failed; every rank gets the same answer.
std::int32_t lowest_failed_rank(bool failed_here);

// What one rank's failure was, for the ranks that did not fail: the message and tilesim's exit code
// (0 when the error was not a tilesim::Error). Every rank calls it; `root` fills `what` and `code`.
void broadcast_failure(std::string& what, int& code, std::int32_t root);

}  // namespace tilesim::sim::rank_messages
