#pragma once
// The sync controller: one SC_METHOD state machine (next_trigger, no thread) that sequences a program's
// phases in simulated time. For each superstep: compute (fixed launch cost, then every tile with
// vertices, ending when the slowest arrives), sync (sync_cycles), exchange (fixed cost, then every
// tile that sends or receives). Tiles are woken once per phase; the controller waits for their count
// of arrivals (PhaseArrivals). A program spread over ranks wakes this rank's tiles only, and its phase
// still lasts until the slowest tile of the whole machine would arrive, which the program knows.
// Engine-internal.
#include <cstdint>
#include <systemc>
#include <vector>

#include "sim/compiled_program.hpp"
#include "sim/stats.hpp"
#include "sim/tile.hpp"
#include "sim/trace.hpp"
#include "sim/work_executor.hpp"

namespace tilesim::sim {

class SyncController : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(SyncController);
  // `sync_track` is the trace track of sync slices, after every tile's track.
  SyncController(const sc_core::sc_module_name& name, std::vector<Tile*> tiles, WorkExecutor& executor,
                 std::int32_t sync_track);

  // Queues a run of `program` from the current simulated time. sc_start() then returns when the
  // program has finished (or a vertex body failed: see WorkExecutor); each phase is appended to
  // stats.phases and, with a trace, recorded as slices after those the trace already holds.
  void begin(const CompiledProgram& program, RunStats& stats, TraceWriter* trace);
  // Forgets the program, stats and trace given to begin().
  void end();

  Cycles program_start_cycle() const { return program_start_cycle_; }

 private:
  enum class State { idle, launching, waiting_for_tiles, waiting_for_phase_end, syncing };

  void on_trigger();
  void start_next_phase();
  void launch_tiles();
  void check_arrivals();
  void end_phase();
  void trace_phase(const CompiledPhase& phase, Cycles start_cycle, Cycles cycles);

  std::vector<Tile*> tiles_;
  WorkExecutor& executor_;
  const std::int32_t sync_track_;
  sc_core::sc_event start_event_;
  PhaseArrivals arrivals_;

  const CompiledProgram* program_ = nullptr;
  RunStats* stats_ = nullptr;
  TraceWriter* trace_ = nullptr;
  double trace_offset_us_ = 0;
  std::vector<char> track_named_;

  State state_ = State::idle;
  std::size_t phase_index_ = 0;
  std::vector<std::size_t> order_;  // the order the current phase's tiles start in (sim/phase_order.hpp)
  Cycles program_start_cycle_ = 0;
  Cycles phase_start_cycle_ = 0;
  Cycles tiles_start_cycle_ = 0;  // after the phase's fixed cost
  Cycles last_arrival_cycles_ = 0;  // after tiles_start_cycle_: the slowest of this process's tiles
};

}  // namespace tilesim::sim
