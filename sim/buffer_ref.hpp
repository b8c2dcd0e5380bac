#pragma once
// Buffers of a Program (sim/program.hpp) and references into them.
#include <cstdint>

namespace tilesim::sim {

using BufferId = std::int32_t;

// A byte offset into a buffer.
struct BufferRef {
  BufferId buffer = -1;
  std::int64_t offset_bytes = 0;
};

}  // namespace tilesim::sim
