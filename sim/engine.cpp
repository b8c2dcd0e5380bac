#include "sim/engine.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <systemc>
#include <vector>

#include "mpi/world.hpp"
#include "sim/arena.hpp"
#include "sim/compiled_program.hpp"
#include "sim/host_rows.hpp"
#include "sim/phase_order.hpp"
#include "sim/phase_sequence.hpp"
#include "sim/rank_messages.hpp"
#include "sim/sync_controller.hpp"
#include "sim/tile.hpp"
#include "sim/work_executor.hpp"

namespace tilesim::sim {

namespace {

// Must happen before the first SystemC object: the time resolution is fixed once any time is created.
// SystemC 2.3.4 prints its banner only from its own main(), never through tilesim's, but a SystemC
// that printed it at elaboration would corrupt `tilesim --json` on stdout; the variable prevents that.
void prepare_systemc() {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  sc_core::sc_set_time_resolution(1, sc_core::SC_NS);  // 1 time unit = 1 tile cycle
}

std::atomic<bool> spread_requested{false};
std::atomic<bool> timing_only_in_systemc{false};
// Engine::SpreadTotals, kept by the calling thread only (MPI_THREAD_FUNNELED: the one that runs).
std::int64_t programs_spread = 0;
std::int64_t host_bytes_received = 0;

// How this process shares a program's machine with the other ranks of its MPI job, if at all.
RankPartition partition_for(const MachineConfig& config, Mode mode) {
  if (mode != Mode::functional || !spread_requested.load()) return {};
  const mpi::World& world = mpi::world();
  if (!world.active || world.size < 2) return {};
  return partition_over_ranks(config, world.size, world.rank);
}

}  // namespace

struct Engine::Impl {
  explicit Impl(std::int32_t slots) : tile_slots(slots), arenas(slots) {
    prepare_systemc();
    tiles.reserve(static_cast<std::size_t>(slots));
    std::vector<Tile*> tile_pointers;
    for (std::int32_t t = 0; t < slots; ++t) {
      const std::string name = "tilesim_tile_" + std::to_string(t);
      tiles.push_back(std::make_unique<Tile>(name.c_str()));
      tile_pointers.push_back(tiles.back().get());
    }
    controller = std::make_unique<SyncController>("tilesim_sync", std::move(tile_pointers), executor, slots);
  }

  const BufferPlacement& host_buffer(BufferId buffer, std::int64_t offset_bytes, std::int64_t bytes,
                                     const char* what) const {
    if (!program) throw std::logic_error(std::string(what) + ": no program loaded");
    if (program->mode != Mode::functional) {
      throw std::logic_error(std::string(what) + ": program " + program->name +
                             " was loaded timing-only; host access needs Mode::functional");
    }
    const auto& buffers = program->layout.buffers;
    if (buffer < 0 || static_cast<std::size_t>(buffer) >= buffers.size()) {
      throw std::logic_error(std::string(what) + ": program " + program->name + " has no buffer " +
                             std::to_string(buffer));
    }
    const BufferPlacement& placement = buffers[static_cast<std::size_t>(buffer)];
    if (offset_bytes < 0 || bytes < 0 || offset_bytes > placement.bytes || bytes > placement.bytes - offset_bytes) {
      throw std::logic_error(std::string(what) + ": bytes [" + std::to_string(offset_bytes) + ", " +
                             std::to_string(offset_bytes + bytes) + ") lie outside buffer " + std::to_string(buffer) +
                             " of program " + program->name + ", which has " + std::to_string(placement.bytes) +
                             " bytes");
    }
    return placement;
  }

  std::byte* host_address(BufferId buffer, std::int64_t offset_bytes) const {
    return program->buffer_addresses[static_cast<std::size_t>(buffer)] + offset_bytes;
  }

  // The rank that holds a buffer's bytes (this one unless the program is spread over ranks).
  std::int32_t holder(BufferId buffer) const {
    return program->partition.owner(program->layout.buffers[static_cast<std::size_t>(buffer)].tile);
  }
  bool held_here(BufferId buffer) const { return holder(buffer) == program->partition.rank; }

  // Each piece checked and resolved to its addresses.
  std::vector<HostRowsView> host_rows_views(const std::vector<HostRows>& pieces, std::byte* host, std::int64_t host_bytes,
                                            const char* what) const {
    std::vector<HostRowsView> views;
    views.reserve(pieces.size());
    for (const HostRows& p : pieces) {
      if (p.rows < 0 || p.row_bytes < 0 || p.host_offset_bytes < 0 || p.host_stride_bytes < 0 ||
          (p.rows > 0 && p.row_bytes > 0 &&
           p.host_offset_bytes + (p.rows - 1) * p.host_stride_bytes + p.row_bytes > host_bytes)) {
        throw std::logic_error(std::string(what) + ": a piece of buffer " + std::to_string(p.buffer) + " (" +
                               std::to_string(p.rows) + " rows of " + std::to_string(p.row_bytes) +
                               " bytes from host byte " + std::to_string(p.host_offset_bytes) + ", " +
                               std::to_string(p.host_stride_bytes) + " apart) lies outside the host array of " +
                               std::to_string(host_bytes) + " bytes");
      }
      host_buffer(p.buffer, 0, p.rows * p.row_bytes, what);
      views.push_back({host_address(p.buffer, 0), host + p.host_offset_bytes, p.rows, p.row_bytes, p.host_stride_bytes});
    }
    return views;
  }

  void check_host_write(BufferId buffer, const char* what) const {
    if (program->shared_copy[static_cast<std::size_t>(buffer)]) {
      throw std::logic_error(std::string(what) + ": buffer " + std::to_string(buffer) + " of program " + program->name +
                             " is a read-only copy sharing its source's bytes; write the source");
    }
  }

  const std::int32_t tile_slots;
  // The CPU kernels' thread budget (OMP_NUM_THREADS, else one per core).
  HostThreads host_threads{omp_get_max_threads()};
  WorkExecutor executor{host_threads};
  std::vector<std::unique_ptr<Tile>> tiles;
  std::unique_ptr<SyncController> controller;
  TileArenas arenas;
  std::optional<CompiledProgram> program;
};

Engine& Engine::instance(std::int32_t tile_slots) {
  // Never destroyed: SystemC elaborates once per process and has no orderly teardown, so the engine
  // lives as long as the process (and stays reachable, so leak checkers stay quiet).
  static Engine* engine = new Engine(tile_slots);
  if (tile_slots > engine->tile_slots()) {
    throw std::logic_error("Engine::instance(" + std::to_string(tile_slots) + "): the engine was elaborated with " +
                           std::to_string(engine->tile_slots()) +
                           " tile slots and SystemC cannot elaborate twice; ask for the most slots first");
  }
  return *engine;
}

Engine::Engine(std::int32_t tile_slots) {
  if (tile_slots < 1) throw std::logic_error("Engine: tile_slots must be at least 1, is " + std::to_string(tile_slots));
  impl_ = std::make_unique<Impl>(tile_slots);
}

Engine::~Engine() = default;

std::int32_t Engine::tile_slots() const { return impl_->tile_slots; }

void Engine::spread_over_mpi_ranks(bool spread) { spread_requested.store(spread); }

void Engine::shuffle_same_instant_order(std::optional<std::uint64_t> seed) { set_phase_order_seed(seed); }

void Engine::sequence_timing_only_in_systemc(bool in_systemc) { timing_only_in_systemc.store(in_systemc); }

Engine::SpreadTotals Engine::spread_totals() {
  return {programs_spread, WorkExecutor::bytes_sent_to_ranks(), host_bytes_received};
}

void Engine::load(const Program& program, const MachineConfig& config, Mode mode) {
  Impl& s = *impl_;
  s.program.reset();  // a failed load leaves nothing loaded
  validate_config(config, s.tile_slots);
  if (program.timing_only && mode == Mode::functional) {
    throw std::logic_error("program " + program.name +
                           " was built timing-only (its exchanges count transfers rather than list them); "
                           "build it for Mode::functional to load it functionally");
  }
  BufferLayout layout = lay_out_buffers(program, config);
  const RankPartition partition = partition_for(config, mode);

  // Spread over ranks, only this rank's tiles get SRAM.
  std::vector<std::byte*> tile_bases(static_cast<std::size_t>(config.num_tiles), nullptr);
  if (mode == Mode::functional) {
    for (TileId t = 0; t < config.num_tiles; ++t) {
      const auto bytes = layout.tile_bytes[static_cast<std::size_t>(t)];
      if (bytes > 0 && partition.owns(t)) tile_bases[static_cast<std::size_t>(t)] = s.arenas.reserve(t, bytes);
    }
  }
  CompiledProgram compiled = compile_program(program, config, mode, std::move(layout), tile_bases, partition);
  s.executor.reserve_send_buffer(compiled.send_buffer_bytes);
  s.program = std::move(compiled);
  if (partition.distributed()) ++programs_spread;
}

void Engine::write(BufferId buffer, std::int64_t offset_bytes, const void* src, std::int64_t bytes) {
  impl_->host_buffer(buffer, offset_bytes, bytes, "Engine::write");
  impl_->check_host_write(buffer, "Engine::write");
  if (bytes > 0 && impl_->held_here(buffer)) {
    std::memcpy(impl_->host_address(buffer, offset_bytes), src, static_cast<std::size_t>(bytes));
  }
}

void Engine::read(BufferId buffer, std::int64_t offset_bytes, void* dst, std::int64_t bytes) const {
  impl_->host_buffer(buffer, offset_bytes, bytes, "Engine::read");
  if (bytes == 0) return;
  if (impl_->held_here(buffer)) std::memcpy(dst, impl_->host_address(buffer, offset_bytes), static_cast<std::size_t>(bytes));
  if (impl_->program->partition.distributed()) {
    rank_messages::broadcast(static_cast<std::byte*>(dst), bytes, impl_->holder(buffer));
    if (!impl_->held_here(buffer)) host_bytes_received += bytes;
  }
}

void Engine::write_rows(const std::vector<HostRows>& pieces, const void* host, std::int64_t host_bytes) {
  // The host array is only read here; the views share one type for both directions.
  auto views = impl_->host_rows_views(pieces, static_cast<std::byte*>(const_cast<void*>(host)), host_bytes, "Engine::write_rows");
  for (const HostRows& p : pieces) impl_->check_host_write(p.buffer, "Engine::write_rows");
  if (impl_->program && impl_->program->partition.distributed()) {
    // Every rank holds the same host array; each writes the pieces it holds.
    std::size_t kept = 0;
    for (std::size_t k = 0; k < pieces.size(); ++k) {
      if (impl_->held_here(pieces[k].buffer)) views[kept++] = views[k];
    }
    views.resize(kept);
  }
  move_host_rows(views, HostMove::to_buffers, impl_->host_threads);
}

void Engine::read_rows(const std::vector<HostRows>& pieces, void* host, std::int64_t host_bytes) const {
  auto views = impl_->host_rows_views(pieces, static_cast<std::byte*>(host), host_bytes, "Engine::read_rows");
  if (!impl_->program || !impl_->program->partition.distributed()) {
    move_host_rows(views, HostMove::to_host, impl_->host_threads);
    return;
  }
  // The pieces packed by holding rank (in piece order within a rank); each rank fills its part and
  // broadcasts it, then every piece moves to the host: this rank's from its buffers, the others' from
  // the packed bytes.
  const RankPartition& partition = impl_->program->partition;
  const auto ranks = static_cast<std::size_t>(partition.ranks);
  std::vector<std::int64_t> rank_bytes(ranks, 0);
  std::vector<std::int64_t> packed_at(pieces.size(), 0);
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    auto& used = rank_bytes[static_cast<std::size_t>(impl_->holder(pieces[k].buffer))];
    packed_at[k] = used;
    used += pieces[k].rows * pieces[k].row_bytes;
  }
  std::vector<std::int64_t> rank_base(ranks, 0);
  for (std::size_t q = 1; q < ranks; ++q) rank_base[q] = rank_base[q - 1] + rank_bytes[q - 1];
  const std::int64_t total = rank_base.back() + rank_bytes.back();
  std::unique_ptr<std::byte[]> packed(new std::byte[static_cast<std::size_t>(std::max<std::int64_t>(total, 1))]);
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    const auto q = static_cast<std::size_t>(impl_->holder(pieces[k].buffer));
    std::byte* at = packed.get() + rank_base[q] + packed_at[k];
    // A piece's rows lie packed from its buffer's first byte.
    if (static_cast<std::int32_t>(q) == partition.rank) {
      if (views[k].rows > 0 && views[k].row_bytes > 0) std::memcpy(at, views[k].buffer, static_cast<std::size_t>(views[k].rows * views[k].row_bytes));
    } else {
      views[k].buffer = at;
    }
  }
  for (std::size_t q = 0; q < ranks; ++q) {
    rank_messages::broadcast(packed.get() + rank_base[q], rank_bytes[q], static_cast<std::int32_t>(q));
    if (static_cast<std::int32_t>(q) != partition.rank) host_bytes_received += rank_bytes[q];
  }
  move_host_rows(views, HostMove::to_host, impl_->host_threads);
}

RunStats Engine::run(TraceWriter* trace) {
  Impl& s = *impl_;
  if (!s.program) throw std::logic_error("Engine::run: no program loaded (call load first)");
  const CompiledProgram& program = *s.program;

  RunStats stats;
  stats.program = program.name;
  stats.exchange_bytes_sent = program.exchange_bytes_sent;
  stats.exchange_bytes_received = program.exchange_bytes_received;
  stats.peak_tile_bytes = program.layout.peak_tile_bytes;
  stats.peak_tile = program.layout.peak_tile;
  stats.vertices = program.vertex_count;
  stats.supersteps = static_cast<std::int32_t>(program.superstep_names.size());
  stats.phases.reserve(program.phases.size());

  const auto wall_start = std::chrono::steady_clock::now();
  // Timing-only and untraced: nothing for the kernel to do but confirm the phases' sum (phase_sequence.hpp).
  const bool direct = program.mode == Mode::timing_only && trace == nullptr && !timing_only_in_systemc.load();
  if (direct) {
    sequence_phases(program, stats);
  } else if (!program.phases.empty()) {
    s.controller->begin(program, stats, trace);
    try {
      sc_core::sc_start();  // runs until no event is pending: the program's end
    } catch (...) {
      s.controller->end();
      throw;
    }
    s.controller->end();
  }
  stats.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (auto error = s.executor.take_error(program.partition.distributed())) std::rethrow_exception(error);

  for (const auto& phase : stats.phases) {
    switch (phase.kind) {
      case PhaseKind::compute:
        stats.compute_cycles += phase.cycles;
        break;
      case PhaseKind::sync:
        stats.sync_cycles += phase.cycles;
        break;
      case PhaseKind::exchange:
        stats.exchange_cycles += phase.cycles;
        break;
    }
  }
  stats.total_cycles = stats.compute_cycles + stats.sync_cycles + stats.exchange_cycles;
  if (!direct && !program.phases.empty()) {
    const auto elapsed_cycles = static_cast<Cycles>(sc_core::sc_time_stamp().value()) - s.controller->program_start_cycle();
    if (elapsed_cycles != stats.total_cycles) {
      throw std::logic_error("engine: program " + program.name + " took " + std::to_string(elapsed_cycles) +
                             " simulated cycles but its phases add up to " + std::to_string(stats.total_cycles));
    }
  }
  stats.simulated_cycles_per_s = stats.wall_s > 0 ? static_cast<double>(stats.total_cycles) / stats.wall_s : 0;
  return stats;
}

}  // namespace tilesim::sim
