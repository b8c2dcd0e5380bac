#include "sim/work_executor.hpp"

#include <cstddef>
#include <mutex>
#include <stdexcept>
#include <string>

#include "common/error.hpp"
#include "sim/block_copy.hpp"
#include "sim/phase_order.hpp"
#include "sim/rank_messages.hpp"

namespace tilesim::sim {

namespace {

// A compute phase runs on several threads when its tiles' cycles add up to at least this: simulated
// cycles track a vertex body's host work closely enough to tell a phase of tiny vertices (where waking
// a second thread costs more than it saves) from one like a large gather's (milliseconds).
constexpr Cycles parallel_min_tile_cycles = Cycles{1} << 20;

std::int64_t bytes_sent = 0;  // to other ranks; by the one thread that makes MPI calls

}  // namespace

std::int64_t WorkExecutor::bytes_sent_to_ranks() { return bytes_sent; }

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

bool WorkExecutor::ranks_agree_none_failed() {
  if (failed_rank_ < 0) failed_rank_ = rank_messages::lowest_failed_rank(static_cast<bool>(error_));
  if (failed_rank_ >= 0) stopped_ = true;
  return failed_rank_ < 0;
}

void WorkExecutor::reserve_send_buffer(std::int64_t bytes) {
  if (send_buffer_bytes_ >= bytes) return;
  send_buffer_.reset();  // free first, so peak memory is the larger buffer, not both
  send_buffer_.reset(new std::byte[static_cast<std::size_t>(bytes)]);
  send_buffer_bytes_ = bytes;
}

void WorkExecutor::exchange_messages(const CompiledPhase& phase) {
  const PhaseMessages& m = program_->messages[static_cast<std::size_t>(phase.messages)];
  if (send_buffer_bytes_ < program_->send_buffer_bytes) throw std::logic_error("engine: the send buffer was not reserved at load");
  std::byte* out = send_buffer_.get();
  for (const RankSend& send : m.sends) {
    for (std::int64_t k = 0; k < send.blocks; ++k) {
      move_bytes(out, send.src + k * send.src_stride_bytes, static_cast<std::size_t>(send.bytes));
      out += send.bytes;
    }
  }
  rank_messages::exchange(send_buffer_.get(), m.send_bytes, program_->receive_buffer.get(), m.receive_bytes);
  bytes_sent += out - send_buffer_.get();
}

std::exception_ptr WorkExecutor::take_error(bool across_ranks) {
  std::exception_ptr error = error_;
  if (across_ranks) {
    // Every rank gets here once per run; those that stopped at an exchange already agreed.
    ranks_agree_none_failed();
    if (failed_rank_ >= 0) {
      std::string what;
      int code = 0;
      if (error_) {
        try {
          std::rethrow_exception(error_);
        } catch (const Error& e) {
          what = e.what();
          code = static_cast<int>(e.code());
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
          what = "an exception that is not a std::exception";
        }
      }
      rank_messages::broadcast_failure(what, code, failed_rank_);
      if (!error) {
        const std::string message = "rank " + std::to_string(failed_rank_) + " failed: " + what;
        error = code != 0 ? std::make_exception_ptr(Error(static_cast<ExitCode>(code), message))
                          : std::make_exception_ptr(std::runtime_error(message));
      }
    }
  }
  error_ = nullptr;
  stopped_ = false;
  failed_rank_ = -1;
  return error;
}

void WorkExecutor::run_phase(const CompiledPhase& phase, const std::vector<std::size_t>& order) noexcept {
  // Timing-only work has no items.
  if (!program_ || program_->mode != Mode::functional) return;
  if (phase.messages >= 0) {
    // Every rank reaches every exchange phase, failed or not, until they agree to stop.
    if (!ranks_agree_none_failed()) return;
    try {
      exchange_messages(phase);
    } catch (...) {
      fail(std::current_exception());
      return;
    }
  }
  // After a failure, stop touching bytes.
  if (error_) return;
  const auto& tiles = phase.tiles;
  Cycles tile_cycles = 0;
  // Only tiles with work here count (spread over ranks, another rank's tiles have none).
  for (const TileWork& work : tiles) tile_cycles += work.count > 0 ? work.cycles : 0;
  // A shuffled order (a test's) runs on this thread alone, so the order is the one drawn.
  if (phase.kind != PhaseKind::compute || tile_cycles < parallel_min_tile_cycles || threads_.threads() <= 1 || phase_order_shuffled()) {
    for (const std::size_t k : order) {
      try {
        run_tile(phase, tiles[k]);
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
