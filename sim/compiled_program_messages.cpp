// Cross-rank messages of a program spread over ranks (compiled_program_messages.hpp).
#include "sim/compiled_program_messages.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/compiled_program_phase.hpp"

namespace tilesim::sim::compile {

RankMessages::RankMessages(const RankPartition& partition, const ProgramBuffers& buffers, CompiledProgram& out)
    : partition_(partition), buffers_(buffers), out_(out) {
  const auto ranks = static_cast<std::size_t>(partition.ranks);
  sends_to_.resize(ranks);
  receive_from_.assign(ranks, 0);
  rank_hit_.assign(ranks, 0);
}

// A transfer whose bytes cross ranks must read bytes that no transfer of the same exchange writes. One
// process copies in source-tile order and a source written earlier in that order sends the new bytes;
// a rank packs its messages before copying, so it would send the old ones. Every rank checks the whole
// plan, so all refuse it alike. A copy of a region onto itself writes what was there and is no write
// here.
void RankMessages::check_sources(const ExchangePlan& plan, const std::string& context) const {
  struct Region {
    BufferId buffer;
    std::int64_t begin, end;
    bool operator<(const Region& o) const { return buffer != o.buffer ? buffer < o.buffer : begin < o.begin; }
  };
  std::vector<Region> written;
  for (const Transfer& transfer : plan.transfers) {
    if (transfer.bytes == 0) continue;
    const std::int64_t span = (transfer.blocks - 1) * transfer.dst_stride_bytes + transfer.bytes;
    for (const auto& ref : transfer.dst) {
      const bool onto_itself = ref.buffer == transfer.src.buffer && ref.offset_bytes == transfer.src.offset_bytes &&
                               transfer.dst_stride_bytes == transfer.src_stride_bytes;
      if (!onto_itself) written.push_back({ref.buffer, ref.offset_bytes, ref.offset_bytes + span});
    }
  }
  if (written.empty()) return;
  std::sort(written.begin(), written.end());
  // furthest[i]: the furthest end among the regions of written[i]'s buffer up to i.
  std::vector<std::int64_t> furthest(written.size());
  for (std::size_t i = 0; i < written.size(); ++i) {
    const bool same = i > 0 && written[i - 1].buffer == written[i].buffer;
    furthest[i] = same ? std::max(furthest[i - 1], written[i].end) : written[i].end;
  }
  for (std::size_t k = 0; k < plan.transfers.size(); ++k) {
    const Transfer& transfer = plan.transfers[k];
    if (transfer.bytes == 0) continue;
    const std::int32_t from = partition_.owner(buffers_.tile_of(transfer.src.buffer));
    bool crosses = false;
    for (const auto& ref : transfer.dst) crosses = crosses || partition_.owner(buffers_.tile_of(ref.buffer)) != from;
    if (!crosses) continue;
    const Region src{transfer.src.buffer, transfer.src.offset_bytes,
                     transfer.src.offset_bytes + (transfer.blocks - 1) * transfer.src_stride_bytes + transfer.bytes};
    // The last written region of the buffer that begins before the source ends.
    auto it = std::lower_bound(written.begin(), written.end(), Region{src.buffer, src.end, 0});
    if (it == written.begin()) continue;
    const auto i = static_cast<std::size_t>(it - written.begin()) - 1;
    if (written[i].buffer == src.buffer && furthest[i] > src.begin) {
      throw std::logic_error(context + ": transfer " + str(static_cast<std::int64_t>(k)) + " sends " +
                             buffers_.name(src.buffer) + " to another rank, but a transfer of the same exchange writes bytes it reads; " +
                             "a program spread over ranks must not read what its exchange writes");
    }
  }
}

void RankMessages::add_sends(const Transfer& transfer, const std::byte* src) {
  hit_ranks_.clear();
  for (const auto& ref : transfer.dst) {
    const std::int32_t q = partition_.owner(buffers_.tile_of(ref.buffer));
    if (q == partition_.rank || rank_hit_[static_cast<std::size_t>(q)]) continue;
    rank_hit_[static_cast<std::size_t>(q)] = 1;
    hit_ranks_.push_back(q);
  }
  for (std::int32_t q : hit_ranks_) {
    rank_hit_[static_cast<std::size_t>(q)] = 0;
    sends_to_[static_cast<std::size_t>(q)].push_back({src, transfer.bytes, transfer.blocks, transfer.src_stride_bytes});
  }
}

RankMessages::Received RankMessages::receive(const Transfer& transfer, TileId src_tile) {
  Received received;
  received.from_rank = partition_.owner(src_tile);
  auto& bytes_so_far = receive_from_[static_cast<std::size_t>(received.from_rank)];
  received.offset_bytes = bytes_so_far;
  bytes_so_far += transfer.total_bytes();
  return received;
}

// The receiving copies learn their place in the receive buffer: rank q's message lands after those of
// the ranks before it.
std::int32_t RankMessages::finish_phase(const std::string& context) {
  PhaseMessages m;
  const auto ranks = static_cast<std::size_t>(partition_.ranks);
  m.send_bytes.assign(ranks, 0);
  m.receive_bytes = receive_from_;
  for (std::size_t q = 0; q < ranks; ++q) {
    for (const RankSend& send : sends_to_[q]) m.send_bytes[q] += send.total_bytes();
    m.sends.insert(m.sends.end(), sends_to_[q].begin(), sends_to_[q].end());
    sends_to_[q].clear();
  }
  std::vector<std::int64_t> rank_base(ranks, 0);
  for (std::size_t q = 1; q < ranks; ++q) rank_base[q] = rank_base[q - 1] + m.receive_bytes[q - 1];
  for (const ReceivedCopy& r : phase_received_) {
    received_copies_.push_back({r.copy, rank_base[static_cast<std::size_t>(r.from_rank)] + r.offset_bytes});
  }
  phase_received_.clear();
  std::int64_t sent = 0;
  for (auto b : m.send_bytes) sent += b;
  receive_buffer_bytes_ = std::max(receive_buffer_bytes_, rank_base.back() + m.receive_bytes.back());
  out_.send_buffer_bytes = std::max(out_.send_buffer_bytes, sent);
  std::fill(receive_from_.begin(), receive_from_.end(), 0);
  out_.messages.push_back(std::move(m));
  return static_cast<std::int32_t>(index32(out_.messages.size() - 1, context));
}

void RankMessages::place_receive_buffer() {
  if (receive_buffer_bytes_ == 0) return;
  out_.receive_buffer.reset(new std::byte[static_cast<std::size_t>(receive_buffer_bytes_)]);
  for (const auto& [copy, offset] : received_copies_) out_.copies[copy].src = out_.receive_buffer.get() + offset;
}

}  // namespace tilesim::sim::compile
