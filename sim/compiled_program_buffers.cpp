// The compile passes' view of a program's buffers (compiled_program_buffers.hpp).
#include "sim/compiled_program_buffers.hpp"

#include "sim/compiled_program_phase.hpp"

namespace tilesim::sim::compile {

ProgramBuffers::ProgramBuffers(const Program& program, CompiledProgram& out, const RankPartition& partition,
                               const std::vector<std::byte*>& tile_bases)
    : program_(program), out_(out), partition_(partition) {
  // Only bytes are shared, so only a functional run needs (and checks) the read-only copies' promise; a
  // timing-only run costs a shared copy's exchange as any other.
  if (out.mode != Mode::functional) return;
  shared_ = find_shared_copies(program);
  resolve_addresses(tile_bases);
}

// Each buffer's bytes: its own place in its tile's arena, or its source's for a shared copy. A source
// is used before its copies, so resolving in that order never revisits a buffer. Spread over ranks,
// only this rank's buffers have bytes, and a shared copy whose source another rank holds keeps its own
// place, which a message fills.
void ProgramBuffers::resolve_addresses(const std::vector<std::byte*>& tile_bases) {
  const std::size_t count = program_.buffers.size();
  out_.buffer_addresses.assign(count, nullptr);
  out_.shared_copy.assign(count, 0);
  shares_bytes_.assign(count, 0);
  for (std::size_t b = 0; b < count; ++b) {
    const BufferPlacement& p = out_.layout.buffers[b];
    std::byte* base = here(p.tile) ? tile_bases[static_cast<std::size_t>(p.tile)] : nullptr;
    out_.buffer_addresses[b] = base ? base + p.offset_bytes : nullptr;
  }
  for (const auto& step : program_.steps) {
    for (const auto& transfer : step.exchange.transfers) {
      if (!transfer.read_only_copies) continue;
      for (const auto& ref : transfer.dst) {
        if (!shared_copy(ref.buffer)) continue;
        // Read-only on every rank, whoever holds its bytes: a host write is refused alike everywhere.
        out_.shared_copy[static_cast<std::size_t>(ref.buffer)] = 1;
        if (!here(tile_of(ref.buffer)) || !here(tile_of(transfer.src.buffer))) continue;
        out_.buffer_addresses[static_cast<std::size_t>(ref.buffer)] = address(transfer.src);
        shares_bytes_[static_cast<std::size_t>(ref.buffer)] = 1;
      }
    }
  }
}

bool ProgramBuffers::shared_copy(BufferId buffer) const {
  return buffer >= 0 && static_cast<std::size_t>(buffer) < shared_.size() && shared_[static_cast<std::size_t>(buffer)].shared;
}

std::string ProgramBuffers::name(BufferId buffer) const {
  return "buffer " + program_.name_of(buffer) + " (id " + str(buffer) + ")";
}

std::string ProgramBuffers::range_error(const BufferRef& ref, std::int64_t bytes) const {
  if (!exists(ref.buffer)) {
    return " refers to buffer id " + str(ref.buffer) + "; the program declares " +
           str(static_cast<std::int64_t>(program_.buffers.size())) + " buffers";
  }
  return " covers bytes [" + str(ref.offset_bytes) + ", " + str(ref.offset_bytes + bytes) + ") of " + name(ref.buffer) +
         ", which has " + str(placement(ref.buffer).bytes) + " bytes";
}

}  // namespace tilesim::sim::compile
