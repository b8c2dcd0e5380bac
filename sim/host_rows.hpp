#pragma once
// The byte moves of Engine::write_rows and Engine::read_rows, on addresses already checked. A tensor
// split into column blocks comes back as thousands of rows a few dozen bytes wide per block; moved
// piece by piece with a library call per row, a 64 MiB gather output cost several times what its bytes
// do. Here the pieces that cover the same host rows form a band whose host rows are visited once each,
// in order (piece by piece instead, rows a whole host row apart map to few cache sets and evict each
// other), each row moved inline, and a large move is split over the host's cores. Engine-internal.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/host_threads.hpp"

namespace tilesim::sim {

// One piece with its addresses: `rows` rows of `row_bytes`, packed in the buffer; host row k at
// host + k * host_stride_bytes.
struct HostRowsView {
  std::byte* buffer = nullptr;
  std::byte* host = nullptr;
  std::int64_t rows = 0;
  std::int64_t row_bytes = 0;
  std::int64_t host_stride_bytes = 0;
};

enum class HostMove { to_buffers, to_host };

// Moves every piece's bytes one way. The result does not depend on how the work is split: distinct
// pieces must not overlap where they are written (the host for to_host, the buffers for to_buffers).
void move_host_rows(const std::vector<HostRowsView>& pieces, HostMove direction, HostThreads& threads);

}  // namespace tilesim::sim
