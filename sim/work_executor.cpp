#include "sim/work_executor.hpp"

#include <cstddef>
#include <mutex>

#include "sim/block_copy.hpp"

namespace tilesim::sim {

namespace {

// A compute phase runs on several threads when its tiles' cycles add up to at least this: simulated
// cycles track a vertex body's host work closely enough to tell a phase of tiny vertices (where waking
// a second thread costs more than it saves) from one like a large gather's (milliseconds).
constexpr Cycles parallel_min_tile_cycles = Cycles{1} << 20;

}  // namespace

void WorkExecutor::run_tile(const CompiledPhase& phase, const TileWork& work) const {
  if (phase.kind == PhaseKind::compute) {
    const auto* items = program_->vertices.data() + work.first;
    const auto* addresses = program_->addresses.data();
    for (std::uint32_t i = 0; i < work.count; ++i) {
      const VertexItem& item = items[i];
      if (item.execute) item.execute(VertexContext(addresses + item.first_address, item.address_count));
    }
  } else if (phase.kind == PhaseKind::exchange) {
    const auto* copies = program_->copies.data() + work.first;
    for (std::uint32_t i = 0; i < work.count; ++i) {
      const CopyItem& c = copies[i];
      // memmove semantics: a plan may copy a region onto itself; overlapping regions are the plan's business.
      for (std::int64_t k = 0; k < c.blocks; ++k) {
        move_bytes(c.dst + k * c.dst_stride_bytes, c.src + k * c.src_stride_bytes, static_cast<std::size_t>(c.bytes));
      }
    }
  }
}

void WorkExecutor::run_phase(const CompiledPhase& phase) noexcept {
  // Timing-only work has no items; after a failure, stop touching bytes.
  if (!program_ || program_->mode != Mode::functional || failed()) return;
  const auto& tiles = phase.tiles;
  Cycles tile_cycles = 0;
  for (const TileWork& work : tiles) tile_cycles += work.cycles;
  if (phase.kind != PhaseKind::compute || tile_cycles < parallel_min_tile_cycles || threads_.threads() <= 1) {
    for (const TileWork& work : tiles) {
      try {
        run_tile(phase, work);
      } catch (...) {
        fail(std::current_exception());
        return;
      }
    }
    return;
  }
  // Every tile runs, and the failure kept is the lowest tile's in the phase's order: the one the
  // one-thread loop stops at, whatever the threads' timing.
  std::mutex failure_mutex;
  std::size_t failed_at = tiles.size();
  std::exception_ptr failure;
  threads_.run(static_cast<std::int64_t>(tiles.size()), [&](std::int64_t k) {
    try {
      run_tile(phase, tiles[static_cast<std::size_t>(k)]);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failure_mutex);
      if (static_cast<std::size_t>(k) < failed_at) {
        failed_at = static_cast<std::size_t>(k);
        failure = std::current_exception();
      }
    }
  });
  if (failure) fail(failure);
}

}  // namespace tilesim::sim
