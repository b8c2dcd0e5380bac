#pragma once
// The functional side of a phase: runs its tiles' vertex bodies or exchange copies. Timing-only
// programs skip it entirely. An exception from a vertex body is kept (that of the lowest tile in the
// phase's order), the phase still ends normally, and the engine rethrows it after the simulation stops.
//
// A program spread over ranks (sim/rank_partition.hpp) runs this rank's tiles only; each exchange
// phase first sends and receives the bytes that cross ranks (sim/rank_messages.hpp). A failure must not
// leave the other ranks waiting for a message, so it stops the run only once the ranks agree on it:
// every exchange phase and the end of the run ask every rank whether one failed, and all stop together.
// Engine-internal.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>

#include "sim/compiled_program.hpp"
#include "sim/host_threads.hpp"

namespace tilesim::sim {

class WorkExecutor {
 public:
  explicit WorkExecutor(HostThreads& threads) : threads_(threads) {}

  // Sets the program whose phases run next (nullptr: none).
  void set_program(const CompiledProgram* program) { program_ = program; }
  // Makes room for the largest message a loaded program sends (CompiledProgram::send_buffer_bytes), at
  // load: an allocation that failed while the ranks exchange would leave the others waiting.
  void reserve_send_buffer(std::int64_t bytes);

  // Runs every tile's functional work of `phase`, when the phase starts (its tiles' wake-ups only time
  // it). A compute phase with enough work spreads its tiles over the host's cores: a vertex touches
  // only its own tile's buffers (and read-only shared copies), so the bytes come out the same in any
  // order. Exchange copies stay on one thread in plan order, since a plan may overlap regions.
  // `order`: the positions of phase.tiles in the order to run them (sim/phase_order.hpp).
  void run_phase(const CompiledPhase& phase, const std::vector<std::size_t>& order) noexcept;

  void fail(std::exception_ptr error) noexcept {
    if (!error_) error_ = error;
    if (!across_ranks()) stopped_ = true;
  }
  // Whether the run must stop: a failure here (one process), or one that the ranks agreed on.
  bool stopped() const { return stopped_; }
  // After the simulation stops: the failure to rethrow, or null. Spread over ranks, every rank calls it
  // and gets one when any rank failed: its own, or the lowest failed rank's message and exit code.
  // Clears the failure.
  std::exception_ptr take_error(bool across_ranks);

  // Bytes this process has sent to other ranks in exchange phases (Engine::spread_totals).
  static std::int64_t bytes_sent_to_ranks();

 private:
  bool across_ranks() const { return program_ && program_->partition.distributed(); }
  // Spread over ranks: asks every rank whether one failed (a collective call); false when one did.
  bool ranks_agree_none_failed();
  void exchange_messages(const CompiledPhase& phase);
  void run_tile(const CompiledPhase& phase, const TileWork& work) const;

  HostThreads& threads_;
  const CompiledProgram* program_ = nullptr;
  std::exception_ptr error_;     // this process's failure
  bool stopped_ = false;
  std::int32_t failed_rank_ = -1;  // spread over ranks: the lowest failed rank, once agreed
  std::unique_ptr<std::byte[]> send_buffer_;
  std::int64_t send_buffer_bytes_ = 0;
};

}  // namespace tilesim::sim
