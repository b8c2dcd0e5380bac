#pragma once
// Where a program's buffers are, as the compile passes see them: each buffer's tile and place in its
// arena, its bytes on this rank in functional mode (a shared copy's are its source's,
// sim/shared_copies.hpp), and whether a reference into one is valid, with the reason when it is not.
// Engine-internal.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/compiled_program.hpp"
#include "sim/shared_copies.hpp"

namespace tilesim::sim::compile {

class ProgramBuffers {
 public:
  // `out` already holds the layout; in functional mode this fills its buffer_addresses and shared_copy
  // from `tile_bases` (each tile's arena; spread over ranks, this rank's tiles' only).
  ProgramBuffers(const Program& program, CompiledProgram& out, const RankPartition& partition,
                 const std::vector<std::byte*>& tile_bases);

  const BufferPlacement& placement(BufferId buffer) const {
    return out_.layout.buffers[static_cast<std::size_t>(buffer)];
  }
  TileId tile_of(BufferId buffer) const { return placement(buffer).tile; }
  // Whether this rank holds the tile's SRAM and runs its work.
  bool here(TileId tile) const { return partition_.owns(tile); }

  std::byte* address(const BufferRef& ref) const {
    std::byte* base = out_.buffer_addresses[static_cast<std::size_t>(ref.buffer)];
    // A tile whose buffers are all empty has no arena; its refs are empty ranges.
    return base ? base + ref.offset_bytes : nullptr;
  }

  // A shared copy whose bytes are its source's on this rank: it receives no copy.
  bool shares_bytes(BufferId buffer) const { return shares_bytes_[static_cast<std::size_t>(buffer)] != 0; }

  // [offset, offset + bytes) lies inside the buffer.
  bool in_range(const BufferRef& ref, std::int64_t bytes) const {
    if (!exists(ref.buffer)) return false;
    const auto capacity = placement(ref.buffer).bytes;
    return ref.offset_bytes >= 0 && ref.offset_bytes <= capacity && bytes <= capacity - ref.offset_bytes;
  }
  // Why in_range failed; messages are built only on failure, so valid programs load fast.
  std::string range_error(const BufferRef& ref, std::int64_t bytes) const;

  // "buffer NAME (id N)" for messages.
  std::string name(BufferId buffer) const;

 private:
  bool exists(BufferId buffer) const {
    return buffer >= 0 && static_cast<std::size_t>(buffer) < program_.buffers.size();
  }
  bool shared_copy(BufferId buffer) const;
  void resolve_addresses(const std::vector<std::byte*>& tile_bases);

  const Program& program_;
  CompiledProgram& out_;
  const RankPartition partition_;
  std::vector<SharedSource> shared_;  // by buffer
  std::vector<char> shares_bytes_;    // by buffer: a shared copy whose source's bytes this rank holds
};

}  // namespace tilesim::sim::compile
