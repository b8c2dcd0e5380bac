#include "sim/sync_controller.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/phase_order.hpp"
#include "sim/phase_sequence.hpp"

namespace tilesim::sim {

namespace {

Cycles now_cycles() { return static_cast<Cycles>(sc_core::sc_time_stamp().value()); }

sc_core::sc_time after(Cycles cycles) {
  return sc_core::sc_time::from_value(static_cast<sc_core::sc_time::value_type>(cycles));
}

}  // namespace

SyncController::SyncController(const sc_core::sc_module_name& name, std::vector<Tile*> tiles, WorkExecutor& executor,
                               std::int32_t sync_track)
    : sc_core::sc_module(name),
      tiles_(std::move(tiles)),
      executor_(executor),
      sync_track_(sync_track),
      start_event_("start") {
  SC_METHOD(on_trigger);
  sensitive << start_event_;
  dont_initialize();
}

void SyncController::begin(const CompiledProgram& program, RunStats& stats, TraceWriter* trace) {
  if (state_ != State::idle) throw std::logic_error("sync controller: a program is already running");
  program_ = &program;
  stats_ = &stats;
  trace_ = trace;
  phase_index_ = 0;
  program_start_cycle_ = now_cycles();
  executor_.set_program(&program);
  if (trace_) {
    trace_offset_us_ = trace_->end_us();
    track_named_.assign(tiles_.size(), 0);
    trace_->name_track(sync_track_, "sync");
  }
  // A delta notification: allowed while the simulation is paused, and it starts at the current time.
  start_event_.notify(sc_core::SC_ZERO_TIME);
}

void SyncController::end() {
  program_ = nullptr;
  stats_ = nullptr;
  trace_ = nullptr;
  executor_.set_program(nullptr);
}

void SyncController::on_trigger() {
  // An exception must not escape an SC_METHOD (SystemC would end the simulation for good): keep it
  // for run() to rethrow and stop sequencing.
  try {
    switch (state_) {
      case State::launching:
        launch_tiles();
        return;
      case State::waiting_for_tiles:
        check_arrivals();
        if (state_ == State::waiting_for_phase_end) return;
        end_phase();
        ++phase_index_;
        break;
      case State::waiting_for_phase_end:
      case State::syncing:
        end_phase();
        ++phase_index_;
        break;
      case State::idle:  // woken by begin()
        break;
    }
    start_next_phase();
  } catch (...) {
    executor_.fail(std::current_exception());
    state_ = State::idle;
  }
}

void SyncController::start_next_phase() {
  if (phase_index_ >= program_->phases.size() || executor_.stopped()) {
    // No next_trigger: the method falls back to its static sensitivity and waits for begin().
    state_ = State::idle;
    return;
  }
  const CompiledPhase& phase = program_->phases[phase_index_];
  phase_start_cycle_ = now_cycles();
  if (phase.kind == PhaseKind::sync) {
    state_ = State::syncing;
    next_trigger(after(phase.fixed_cycles));
    return;
  }
  if (phase.fixed_cycles > 0) {
    state_ = State::launching;
    next_trigger(after(phase.fixed_cycles));
    return;
  }
  launch_tiles();
}

void SyncController::launch_tiles() {
  const CompiledPhase& phase = program_->phases[phase_index_];
  tiles_start_cycle_ = now_cycles();
  fill_phase_tile_order(order_, phase.tiles.size(), phase_index_);
  executor_.run_phase(phase, order_);
  const RankPartition& partition = program_->partition;
  arrivals_.pending = 0;
  arrivals_.start_cycle = tiles_start_cycle_;
  arrivals_.all_on_time = true;
  last_arrival_cycles_ = 0;
  for (const TileWork& work : phase.tiles) {
    if (!partition.owns(work.tile)) continue;
    ++arrivals_.pending;
    last_arrival_cycles_ = std::max(last_arrival_cycles_, work.cycles);
  }
  if (arrivals_.pending == 0) {  // another rank's tiles only (or none): the phase's length is known
    state_ = State::waiting_for_phase_end;
    next_trigger(after(phase.slowest_cycles));
    return;
  }
  for (const std::size_t k : order_) {
    const TileWork& work = phase.tiles[k];
    if (partition.owns(work.tile)) tiles_[static_cast<std::size_t>(work.tile)]->start(work, arrivals_);
  }
  state_ = State::waiting_for_tiles;
  next_trigger(arrivals_.all_arrived);
}

void SyncController::check_arrivals() {
  const CompiledPhase& phase = program_->phases[phase_index_];
  // The tiles' arrivals are what SystemC measured; they must agree with the precomputed costs.
  const Cycles arrived = now_cycles() - tiles_start_cycle_;
  if (arrivals_.pending != 0 || !arrivals_.all_on_time || arrived != last_arrival_cycles_) {
    throw std::logic_error("engine: phase " + std::to_string(phase_index_) + " of program " + program_->name + ": the last of " +
                           "its tiles arrived " + std::to_string(arrived) + " cycles after they started, expected " +
                           std::to_string(last_arrival_cycles_) + (arrivals_.all_on_time ? "" : ", and a tile arrived off its own time"));
  }
  // Spread over ranks, the slowest tile may be another rank's: the phase lasts until it would arrive.
  if (arrived < phase.slowest_cycles) {
    state_ = State::waiting_for_phase_end;
    next_trigger(after(phase.slowest_cycles - arrived));
  }
}

void SyncController::end_phase() {
  const CompiledPhase& phase = program_->phases[phase_index_];
  const Cycles cycles = now_cycles() - phase_start_cycle_;
  // What SystemC measured must agree with the precomputed costs.
  const Cycles expected = phase.fixed_cycles + phase.slowest_cycles;
  if (cycles != expected) {
    throw std::logic_error("engine: phase " + std::to_string(phase_index_) + " of program " + program_->name +
                           " lasted " + std::to_string(cycles) + " cycles, expected " + std::to_string(expected));
  }
  stats_->phases.push_back(phase_stats(*program_, phase, phase_start_cycle_ - program_start_cycle_, cycles));
  if (trace_) trace_phase(phase, phase_start_cycle_ - program_start_cycle_, cycles);
}

void SyncController::trace_phase(const CompiledPhase& phase, Cycles start_cycle, Cycles cycles) {
  const double us_per_cycle = 1e6 / program_->config.clock_hz;
  const std::string cat = to_string(phase.kind);
  if (phase.kind == PhaseKind::sync) {
    trace_->add_slice(sync_track_, program_->superstep_names[phase.superstep], cat,
                      trace_offset_us_ + static_cast<double>(start_cycle) * us_per_cycle,
                      static_cast<double>(cycles) * us_per_cycle);
    return;
  }
  const double tiles_start_us =
      trace_offset_us_ + static_cast<double>(tiles_start_cycle_ - program_start_cycle_) * us_per_cycle;
  for (const TileWork& work : phase.tiles) {
    if (work.cycles == 0) continue;  // only busy tiles get slices
    auto& named = track_named_[static_cast<std::size_t>(work.tile)];
    if (!named) {
      trace_->name_track(work.tile, "tile " + std::to_string(work.tile));
      named = 1;
    }
    trace_->add_slice(work.tile, program_->labels[work.label], cat, tiles_start_us,
                      static_cast<double>(work.cycles) * us_per_cycle);
  }
}

}  // namespace tilesim::sim
