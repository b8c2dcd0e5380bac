#pragma once
// The functional side of a phase: runs its tiles' vertex bodies or exchange copies. Timing-only
// programs skip it entirely. An exception from a vertex body is kept (that of the lowest tile in the
// phase's order), the phase still ends normally, and the engine rethrows it after the simulation stops.
// Engine-internal.
#include <exception>

#include "sim/compiled_program.hpp"
#include "sim/host_threads.hpp"

namespace tilesim::sim {

class WorkExecutor {
 public:
  explicit WorkExecutor(HostThreads& threads) : threads_(threads) {}

  // Sets the program whose phases run next (nullptr: none).
  void set_program(const CompiledProgram* program) { program_ = program; }

  // Runs every tile's functional work of `phase`, when the phase starts (its tiles' wake-ups only time
  // it). A compute phase with enough work spreads its tiles over the host's cores: a vertex touches
  // only its own tile's buffers (and read-only shared copies), so the bytes come out the same in any
  // order. Exchange copies stay on one thread in plan order, since a plan may overlap regions.
  void run_phase(const CompiledPhase& phase) noexcept;

  void fail(std::exception_ptr error) noexcept {
    if (!error_) error_ = error;
  }
  bool failed() const { return static_cast<bool>(error_); }
  // Returns the kept exception and clears it.
  std::exception_ptr take_error() {
    auto error = error_;
    error_ = nullptr;
    return error;
  }

 private:
  void run_tile(const CompiledPhase& phase, const TileWork& work) const;

  HostThreads& threads_;
  const CompiledProgram* program_ = nullptr;
  std::exception_ptr error_;
};

}  // namespace tilesim::sim
