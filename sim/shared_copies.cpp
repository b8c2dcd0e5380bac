#include "sim/shared_copies.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace tilesim::sim {

namespace {

// Where in a run a buffer is used: superstep s's compute set at 2s, its exchange at 2s + 1.
struct Uses {
  std::int64_t first = std::numeric_limits<std::int64_t>::max();
  std::int64_t at_first = 0;   // refs at `first`
  std::int64_t writes = 0;     // times it is a transfer destination
  std::int64_t last_write = -1;
};

class UseTable {
 public:
  explicit UseTable(const Program& program) : uses_(program.buffers.size()) {
    for (std::size_t s = 0; s < program.steps.size(); ++s) {
      const auto compute = static_cast<std::int64_t>(2 * s);
      for (const auto& tv : program.steps[s].compute.vertices) {
        for (const auto& ref : tv.vertex.buffers) note(ref.buffer, compute, false);
      }
      for (const auto& transfer : program.steps[s].exchange.transfers) {
        note(transfer.src.buffer, compute + 1, false);
        for (const auto& ref : transfer.dst) note(ref.buffer, compute + 1, true);
      }
    }
  }

  bool exists(BufferId b) const { return b >= 0 && static_cast<std::size_t>(b) < uses_.size(); }
  const Uses& operator[](BufferId b) const { return uses_[static_cast<std::size_t>(b)]; }

 private:
  // Refs to buffers that do not exist are left for compile_program to report.
  void note(BufferId b, std::int64_t position, bool write) {
    if (!exists(b)) return;
    Uses& u = uses_[static_cast<std::size_t>(b)];
    if (position < u.first) {
      u.first = position;
      u.at_first = 0;
    }
    if (position == u.first) ++u.at_first;
    if (write) {
      ++u.writes;
      u.last_write = position;
    }
  }

  std::vector<Uses> uses_;
};

}  // namespace

std::vector<SharedSource> find_shared_copies(const Program& program) {
  std::vector<SharedSource> shared(program.buffers.size());
  const UseTable uses(program);
  for (std::size_t s = 0; s < program.steps.size(); ++s) {
    const Superstep& step = program.steps[s];
    const auto position = static_cast<std::int64_t>(2 * s + 1);
    for (std::size_t k = 0; k < step.exchange.transfers.size(); ++k) {
      const Transfer& transfer = step.exchange.transfers[k];
      if (!transfer.read_only_copies || !uses.exists(transfer.src.buffer)) continue;
      // Built only on failure, so valid programs load fast.
      const auto where = [&] {
        return "program " + program.name + ": superstep " + step.name + ": exchange " + step.exchange.name + ": transfer " +
               std::to_string(k) + " (read-only copies)";
      };
      const bool contiguous =
          transfer.blocks == 1 || (transfer.src_stride_bytes == transfer.bytes && transfer.dst_stride_bytes == transfer.bytes);
      if (uses[transfer.src.buffer].last_write >= position) {
        throw std::logic_error(where() + ": its source, buffer " + program.name_of(transfer.src.buffer) +
                               ", is overwritten by a transfer of this or a later exchange");
      }
      for (const BufferRef& ref : transfer.dst) {
        if (!uses.exists(ref.buffer)) continue;
        const BufferDecl& decl = program.buffers[static_cast<std::size_t>(ref.buffer)];
        if (!contiguous || ref.offset_bytes != 0 || decl.bytes != transfer.total_bytes()) {
          throw std::logic_error(where() + ": destination buffer " + program.name_of(decl) + " (" + std::to_string(decl.bytes) +
                                 " bytes) is not a whole buffer received contiguously");
        }
        const Uses& u = uses[ref.buffer];
        if (u.first != position || u.at_first != 1 || u.writes != 1) {
          throw std::logic_error(where() + ": destination buffer " + program.name_of(decl) +
                                 " is used before this exchange, twice in it, or written by another transfer");
        }
        shared[static_cast<std::size_t>(ref.buffer)] = {true, transfer.src};
      }
    }
  }
  return shared;
}

}  // namespace tilesim::sim
