// Transfer::dst holds its first destination in place and grows onto the heap (sim/transfer_destinations.hpp):
// it must behave as the vector it replaced, through growth, copies and moves.
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/program.hpp"

using tilesim::sim::BufferRef;
using tilesim::sim::TransferDestinations;

namespace {

std::vector<std::int64_t> destination_offsets(const TransferDestinations& d) {
  std::vector<std::int64_t> out;
  for (const BufferRef& ref : d) out.push_back(ref.offset_bytes);
  return out;
}

}  // namespace

TEST_CASE("transfer destinations: one in place, more on the heap, in order", "[sim][unit]") {
  TransferDestinations d;
  CHECK(d.empty());
  for (std::int64_t k = 0; k < 9; ++k) {
    d.push_back({static_cast<tilesim::sim::BufferId>(k), 8 * k});
    CHECK(d.size() == static_cast<std::size_t>(k + 1));
    CHECK(d.back().offset_bytes == 8 * k);
  }
  CHECK(d.front().buffer == 0);
  CHECK(d[4].buffer == 4);
  CHECK(destination_offsets(d) == std::vector<std::int64_t>{0, 8, 16, 24, 32, 40, 48, 56, 64});
}

TEST_CASE("transfer destinations: copies are deep, moves leave the source empty and never throw", "[sim][unit]") {
  static_assert(std::is_nothrow_move_constructible<tilesim::sim::Transfer>::value,
                "a vector of transfers must relocate by moving, not copying");
  for (const std::size_t n : {1u, 3u}) {
    TransferDestinations a;
    for (std::size_t k = 0; k < n; ++k) a.push_back({1, static_cast<std::int64_t>(k)});
    TransferDestinations copy = a;
    copy.front().offset_bytes = 99;
    CHECK(a.front().offset_bytes == 0);
    CHECK(copy.size() == n);
    TransferDestinations moved = std::move(copy);
    CHECK(moved.size() == n);
    CHECK(moved.front().offset_bytes == 99);
    CHECK(copy.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is part of the contract
    moved = a;
    CHECK(destination_offsets(moved) == destination_offsets(a));
  }
  const TransferDestinations listed{{2, 16}, {3, 32}};
  CHECK(destination_offsets(listed) == std::vector<std::int64_t>{16, 32});
}
