#pragma once
// The cross-rank traffic of a program spread over ranks, as compile_program plans it: which exchanges
// can be spread at all, the messages each exchange phase sends and receives (CompiledProgram::messages),
// and the receive buffer that the copies of received bytes read. sim/rank_messages.hpp moves the bytes
// when the program runs. Engine-internal.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/compiled_program.hpp"
#include "sim/compiled_program_buffers.hpp"

namespace tilesim::sim::compile {

class RankMessages {
 public:
  RankMessages(const RankPartition& partition, const ProgramBuffers& buffers, CompiledProgram& out);

  // Throws std::logic_error when a transfer whose bytes cross ranks reads a region that a transfer of
  // the same exchange writes (compile_program, sim/compiled_program.hpp).
  void check_sources(const ExchangePlan& plan, const std::string& context) const;

  // A transfer from this rank's tile to other ranks' tiles: one send to each such rank.
  void add_sends(const Transfer& transfer, const std::byte* src);

  // Where a transfer from another rank's tile lands: at offset_bytes into the message from from_rank.
  struct Received {
    std::int32_t from_rank = -1;  // -1: not received, the source is here
    std::int64_t offset_bytes = 0;
  };
  // The transfer received once from its source's rank, packed: its blocks lie one after another.
  Received receive(const Transfer& transfer, TileId src_tile);
  // Copy `copy` (into CompiledProgram::copies) reads `received`; its source address comes with the
  // receive buffer (place_receive_buffer).
  void read_by(std::uint32_t copy, const Received& received) {
    phase_received_.push_back({copy, received.from_rank, received.offset_bytes});
  }

  // Appends the phase's messages, from what add_sends and receive gathered, to out.messages; their index.
  std::int32_t finish_phase(const std::string& context);

  // One buffer for every phase's received bytes (phases run one at a time); the copies that read
  // them get their addresses now that it exists. Called once, after the last phase.
  void place_receive_buffer();

 private:
  const RankPartition partition_;
  const ProgramBuffers& buffers_;
  CompiledProgram& out_;

  // The current exchange's sends by destination rank, bytes received so far from each rank, and the
  // copies that read received bytes (at an offset into their rank's message); then every such copy of
  // the program with its offset into the receive buffer.
  struct ReceivedCopy {
    std::uint32_t copy;
    std::int32_t from_rank;
    std::int64_t offset_bytes;
  };
  std::vector<std::vector<RankSend>> sends_to_;
  std::vector<std::int64_t> receive_from_;
  std::vector<char> rank_hit_;
  std::vector<std::int32_t> hit_ranks_;
  std::vector<ReceivedCopy> phase_received_;
  std::vector<std::pair<std::uint32_t, std::int64_t>> received_copies_;
  std::int64_t receive_buffer_bytes_ = 0;
};

}  // namespace tilesim::sim::compile
