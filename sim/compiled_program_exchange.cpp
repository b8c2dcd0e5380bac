// Exchange phases (compiled_program_exchange.hpp).
#include "sim/compiled_program_exchange.hpp"

#include <algorithm>
#include <stdexcept>

namespace tilesim::sim::compile {

ExchangePass::ExchangePass(const Program& program, const MachineConfig& config, const ProgramBuffers& buffers,
                           PhaseTiles& tiles, LabelTable& labels, CompiledProgram& out)
    : program_(program),
      config_(config),
      functional_(out.mode == Mode::functional),
      spread_(out.partition.distributed()),
      buffers_(buffers),
      tiles_(tiles),
      labels_(labels),
      out_(out),
      timing_(config, buffers, tiles) {
  if (spread_) messages_.emplace(out.partition, buffers, out);
}

void ExchangePass::compile(const Superstep& step, std::uint32_t step_index) {
  const auto& plan = step.exchange;
  if (plan.empty()) return;
  const std::string context = where(program_, step) + ": exchange " + plan.name;
  tally_transfers(plan, context);
  tiles_.sort_touched();
  if (timing_.add_link_cycles(plan)) out_.phases.back().fixed_cycles += config_.cross_chip_sync_cycles;
  if (spread_) messages_->check_sources(plan, context);

  const auto copies_base = index32(out_.copies.size(), context);
  std::int32_t messages = -1;
  if (functional_) messages = lay_out_copies(plan, copies_base, context);
  append_phase(step, step_index, copies_base, messages);
}

void ExchangePass::finish() {
  if (spread_) messages_->place_receive_buffer();
}

// Checks each transfer, then counts it: its source tile's sends and copies, its destination tiles'
// receptions, and the program's totals.
void ExchangePass::tally_transfers(const ExchangePlan& plan, const std::string& context) {
  for (std::size_t k = 0; k < plan.transfers.size(); ++k) {
    const Transfer& transfer = plan.transfers[k];
    check_transfer(transfer, k, context);
    const TileId src_tile = buffers_.tile_of(transfer.src.buffer);
    tiles_.touch(src_tile);
    timing_.add_send(src_tile, transfer);
    // The source tile performs the copies on wake-up (functional mode); count them for grouping.
    if (functional_ && transfer.bytes > 0) tiles_.items(src_tile) += index32(copied_destinations(transfer), context);
    timing_.add_receptions(transfer);
    out_.exchange_bytes_sent += transfer.total_bytes();
    out_.exchange_bytes_received += transfer.total_bytes() * static_cast<std::int64_t>(transfer.dst.size());
  }
  if (plan.counted.empty() && plan.broadcasts_counted.empty() && !plan.tile_sums_used) return;
  if (functional_) throw std::logic_error(context + " counts transfers, which a functional run cannot make");
  if (plan.tile_sums_used) tally_tile_sums(plan, context);
  const auto num_tiles = static_cast<std::uint32_t>(config_.num_tiles);
  for (std::size_t k = 0; k < plan.counted.size(); ++k) {
    const TransferCount& count = plan.counted[k];
    // One unsigned comparison per tile covers both ends of its range; the message is built off this path.
    if (static_cast<std::uint32_t>(count.src_tile) >= num_tiles || static_cast<std::uint32_t>(count.dst_tile) >= num_tiles ||
        count.bytes < 0 || count.regions < 1) {
      throw_bad_count(count, k, context);
    }
    tiles_.touch(count.src_tile);
    tiles_.touch(count.dst_tile);
    timing_.add_count(count);
    out_.exchange_bytes_sent += count.bytes;
    out_.exchange_bytes_received += count.bytes;
  }
  tally_broadcast_counts(plan, context);
}

// Counts summed per tile (ExchangePlan::tile_sums): sent and received as the listed single-destination
// transfers they stand for would be.
void ExchangePass::tally_tile_sums(const ExchangePlan& plan, const std::string& context) {
  if (plan.tile_sums.size() != 4 * static_cast<std::size_t>(config_.num_tiles)) {
    throw std::logic_error(context + ": per-tile sums for " + str(static_cast<std::int64_t>(plan.tile_sums.size() / 4)) +
                           " tiles on the " + str(config_.num_tiles) + "-tile machine");
  }
  for (std::int32_t t = 0; t < config_.num_tiles; ++t) {
    const std::int64_t* sums = plan.tile_sums.data() + 4 * static_cast<std::size_t>(t);
    if ((sums[0] | sums[1] | sums[2] | sums[3]) == 0) continue;
    if (sums[0] < 0 || sums[1] < 0 || sums[2] < 0 || sums[3] < 0) {
      throw std::logic_error(context + ": tile " + str(t) + "'s per-tile sums are negative (" + str(sums[0]) + " bytes in " +
                             str(sums[1]) + " regions sent, " + str(sums[2]) + " in " + str(sums[3]) + " received)");
    }
    tiles_.touch(t);
    timing_.add_tile_sums(t, sums[0], sums[1], sums[2], sums[3]);
    out_.exchange_bytes_sent += sums[0];
    out_.exchange_bytes_received += sums[2];
  }
}

void ExchangePass::tally_broadcast_counts(const ExchangePlan& plan, const std::string& context) {
  const auto num_tiles = static_cast<std::uint32_t>(config_.num_tiles);
  for (std::size_t s = 0; s < plan.destination_sets.size(); ++s) {
    const auto& set = plan.destination_sets[s];
    const bool in_range = std::all_of(set.begin(), set.end(), [num_tiles](TileId t) { return static_cast<std::uint32_t>(t) < num_tiles; });
    if (set.empty() || !in_range || !std::is_sorted(set.begin(), set.end())) {
      throw std::logic_error(context + ": destination set " + str(static_cast<std::int64_t>(s)) + " (" +
                             str(static_cast<std::int64_t>(set.size())) + " tiles) is empty, unsorted or off the " +
                             str(config_.num_tiles) + "-tile machine");
    }
  }
  for (std::size_t k = 0; k < plan.broadcasts_counted.size(); ++k) {
    const BroadcastCount& count = plan.broadcasts_counted[k];
    if (static_cast<std::uint32_t>(count.src_tile) >= num_tiles || count.destination_set >= plan.destination_sets.size() ||
        count.bytes < 0 || count.regions < 1) {
      throw std::logic_error(context + ": counted broadcast " + str(static_cast<std::int64_t>(k)) + " from tile " +
                             str(count.src_tile) + " to destination set " + str(count.destination_set) + " (of " +
                             str(static_cast<std::int64_t>(plan.destination_sets.size())) + ") has " + str(count.bytes) +
                             " bytes in " + str(count.regions) + " regions");
    }
    const auto& destinations = plan.destination_sets[count.destination_set];
    tiles_.touch(count.src_tile);
    timing_.add_broadcast_count(count, destinations);
    out_.exchange_bytes_sent += count.bytes;
    out_.exchange_bytes_received += count.bytes * static_cast<std::int64_t>(destinations.size());
  }
}

void ExchangePass::throw_bad_count(const TransferCount& count, std::size_t k, const std::string& context) const {
  throw std::logic_error(context + ": counted transfer " + str(static_cast<std::int64_t>(k)) + " from tile " +
                         str(count.src_tile) + " to tile " + str(count.dst_tile) + " (of " + str(config_.num_tiles) +
                         ") has " + str(count.bytes) + " bytes in " + str(count.regions) + " regions");
}

void ExchangePass::check_transfer(const Transfer& transfer, std::size_t k, const std::string& context) const {
  auto transfer_context = [&] { return context + ": transfer " + str(static_cast<std::int64_t>(k)); };
  if (transfer.bytes < 0) throw std::logic_error(transfer_context() + " has " + str(transfer.bytes) + " bytes");
  if (transfer.dst.empty()) throw std::logic_error(transfer_context() + " has no destination");
  if (transfer.blocks < 1 || transfer.src_stride_bytes < 0 || transfer.dst_stride_bytes < 0) {
    throw std::logic_error(transfer_context() + " has " + str(transfer.blocks) + " blocks with strides " +
                           str(transfer.src_stride_bytes) + " and " + str(transfer.dst_stride_bytes));
  }
  // The region a strided transfer spans: from its first block's start to its last block's end.
  const std::int64_t src_span = (transfer.blocks - 1) * transfer.src_stride_bytes + transfer.bytes;
  const std::int64_t dst_span = (transfer.blocks - 1) * transfer.dst_stride_bytes + transfer.bytes;
  if (!buffers_.in_range(transfer.src, src_span)) {
    throw std::logic_error(transfer_context() + ": source" + buffers_.range_error(transfer.src, src_span));
  }
  for (std::size_t d = 0; d < transfer.dst.size(); ++d) {
    if (!buffers_.in_range(transfer.dst[d], dst_span)) {
      throw std::logic_error(transfer_context() + ": destination " + str(static_cast<std::int64_t>(d)) +
                             buffers_.range_error(transfer.dst[d], dst_span));
    }
  }
}

// Groups the copies by source tile, keeping plan order within a tile (a counting sort). Spread over
// ranks, a source tile of another rank has copies here too, reading its message, so each rank makes its
// own tiles' copies in the order one process makes them. Returns the phase's messages (-1 when not
// spread over ranks).
std::int32_t ExchangePass::lay_out_copies(const ExchangePlan& plan, std::uint32_t copies_base,
                                          const std::string& context) {
  std::size_t total = 0;
  for (TileId tile : tiles_.touched()) total += tiles_.items(tile);
  tiles_.counts_to_positions(copies_base);
  out_.copies.resize(copies_base + total);
  for (const Transfer& transfer : plan.transfers) {
    if (transfer.bytes == 0) continue;
    lay_out_transfer_copies(transfer);
  }
  return spread_ ? messages_->finish_phase(context) : -1;
}

// The transfer's copies at its source tile's next positions: one per destination here that does not
// share its bytes.
void ExchangePass::lay_out_transfer_copies(const Transfer& transfer) {
  const TileId src_tile = buffers_.tile_of(transfer.src.buffer);
  auto& position = tiles_.items(src_tile);
  const bool src_here = buffers_.here(src_tile);
  const std::byte* src = src_here ? buffers_.address(transfer.src) : nullptr;
  std::int64_t src_stride_bytes = transfer.src_stride_bytes;
  RankMessages::Received received;
  if (spread_ && src_here) messages_->add_sends(transfer, src);
  if (!src_here) {
    // Only spread over ranks is a source elsewhere.
    if (copied_destinations(transfer) == 0) return;
    received = messages_->receive(transfer, src_tile);
    src_stride_bytes = transfer.bytes;  // packed in the message
  }
  for (const auto& ref : transfer.dst) {
    // Another rank's destination, or a shared copy reading the source's bytes: no copy here.
    if (!buffers_.here(buffers_.tile_of(ref.buffer)) || buffers_.shares_bytes(ref.buffer)) continue;
    if (received.from_rank >= 0) messages_->read_by(position, received);
    out_.copies[position++] =
        CopyItem{src, buffers_.address(ref), transfer.bytes, transfer.blocks, src_stride_bytes, transfer.dst_stride_bytes};
  }
}

void ExchangePass::append_phase(const Superstep& step, std::uint32_t step_index, std::uint32_t copies_base,
                                std::int32_t messages) {
  const auto& plan = step.exchange;
  CompiledPhase phase;
  phase.kind = PhaseKind::exchange;
  phase.superstep = step_index;
  phase.fixed_cycles = config_.exchange_fixed_cycles;
  phase.messages = messages;
  phase.tiles.reserve(tiles_.touched().size());
  const std::uint32_t label = labels_.intern(plan.name.empty() ? step.name : plan.name);
  std::uint32_t copies_begin = copies_base;
  for (TileId tile : tiles_.touched()) {
    TileWork work;
    work.tile = tile;
    work.cycles = timing_.tile_cycles(tile);
    work.first = copies_begin;
    work.count = functional_ ? tiles_.items(tile) - copies_begin : 0;
    work.label = label;
    copies_begin += work.count;
    phase.bytes += timing_.received_bytes(tile);
    phase.tiles.push_back(work);
  }
  timing_.reset_touched();
  tiles_.finish(phase, out_.phases);
}

// The copies this rank makes of a transfer: one per destination here that does not share its bytes.
std::size_t ExchangePass::copied_destinations(const Transfer& transfer) const {
  if (!transfer.read_only_copies && !spread_) return transfer.dst.size();
  std::size_t n = 0;
  for (const auto& ref : transfer.dst) n += buffers_.here(buffers_.tile_of(ref.buffer)) && !buffers_.shares_bytes(ref.buffer) ? 1 : 0;
  return n;
}

}  // namespace tilesim::sim::compile
