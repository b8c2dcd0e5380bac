#pragma once
// The functional side of a phase: runs a tile's vertex bodies or its exchange copies. Timing-only
// programs skip it entirely. An exception from a vertex body is kept (the first one), the phase still
// ends normally, and the engine rethrows it after the simulation stops. Engine-internal.
#include <exception>

#include "sim/compiled_program.hpp"
#include "sim/tile.hpp"

namespace tilesim::sim {

class WorkExecutor final : public TileWorkRunner {
 public:
  // Sets the phase whose work tiles will run next (nullptr: no program).
  void set_phase(const CompiledProgram* program, PhaseKind kind) {
    program_ = program;
    kind_ = kind;
  }

  void run(const TileWork& work) noexcept override;

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
  const CompiledProgram* program_ = nullptr;
  PhaseKind kind_ = PhaseKind::compute;
  std::exception_ptr error_;
};

}  // namespace tilesim::sim
