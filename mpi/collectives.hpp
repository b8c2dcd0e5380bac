#pragma once
// Collective calls over every rank of the MPI world (mpi/world.hpp): each rank makes the same calls in
// the same order. Built without MPI these throw std::logic_error: their callers make them only in a
// world of several ranks. (sum_over_ranks, in mpi/world.hpp, is one too, and works in a world of one.)
#include <cstddef>
#include <cstdint>

namespace tilesim::mpi {

// Blocking calls, for ranks that are all in the same work (the engine spread over ranks). Each throws
// std::runtime_error naming the MPI call that failed.

// Every rank's bytes [0, bytes) of `data` replaced by those of rank `root` (a long broadcast goes as
// several messages).
void broadcast_bytes(std::byte* data, std::int64_t bytes, int root);
// Every rank's values[0, count) replaced by those of rank `root`.
void broadcast_int64s(std::int64_t* values, int count, int root);
// The least `value` over every rank, on every rank.
int min_over_ranks(int value);

// Quiet calls, rooted at rank 0, for ranks that may wait long for one another (a sweep's ranks): the
// call is posted non-blocking and then tested with naps between tests, 50 us at first (a collective
// whose ranks are all there completes at once) doubling to 20 ms, because Open MPI's blocking calls
// poll and so hold a whole core, which the ranks still working need.

// Rank 0's values[0, count) on every rank.
void broadcast_from_root_quietly(std::int64_t* values, int count);
void broadcast_from_root_quietly(char* text, int count);
// On rank 0, every rank's values[0, count) into all[count * rank, count * (rank + 1)); `all` is unused
// elsewhere. Every rank passes the same count.
void gather_to_root_quietly(const double* values, int count, double* all);
void gather_to_root_quietly(const int* values, int count, int* all);
// On rank 0, each rank r's text[0, counts[r]) into all[offsets[r], offsets[r] + counts[r]); `all`,
// `counts` and `offsets` are unused elsewhere.
void gather_to_root_quietly(const char* text, int count, char* all, const int* counts, const int* offsets);

}  // namespace tilesim::mpi
