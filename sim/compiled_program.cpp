#include "sim/compiled_program.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

#include "common/error.hpp"
#include "sim/shared_copies.hpp"

namespace tilesim::sim {

namespace {

std::string str(std::int64_t value) { return std::to_string(value); }

std::string machine_suffix(const MachineConfig& config) { return " (machine " + config.name + ")"; }

// TileWork and VertexItem keep 32-bit indices to stay small; a program that large is a planner bug.
std::uint32_t index32(std::size_t index, const std::string& what) {
  if (index > std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error(what + ": more than 2^32 items in one program");
  }
  return static_cast<std::uint32_t>(index);
}

// Interns trace slice names, so a phase stores one index per tile instead of a string.
class LabelTable {
 public:
  explicit LabelTable(std::vector<std::string>& labels) : labels_(labels) {}

  std::uint32_t intern(const std::string& label) {
    // Consecutive vertices usually run the same codelet: skip the hash then.
    if (have_last_ && label == labels_[last_]) return last_;
    auto [it, inserted] = ids_.try_emplace(label, static_cast<std::uint32_t>(labels_.size()));
    if (inserted) labels_.push_back(label);
    last_ = it->second;
    have_last_ = true;
    return last_;
  }
  const std::string& operator[](std::uint32_t id) const { return labels_[id]; }

 private:
  std::vector<std::string>& labels_;
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::uint32_t last_ = 0;
  bool have_last_ = false;
};

class Compiler {
 public:
  Compiler(const Program& program, const MachineConfig& config, Mode mode, BufferLayout layout,
           const std::vector<std::byte*>& tile_bases, const RankPartition& partition)
      : program_(program),
        config_(config),
        functional_(mode == Mode::functional),
        partition_(partition),
        spread_(functional_ && partition.distributed()),
        tile_bases_(tile_bases),
        labels_(out_.labels) {
    out_.name = program.name;
    out_.config = config;
    out_.mode = mode;
    // Timing-only programs are never spread: they have no bytes to keep apart.
    out_.partition = spread_ ? partition : RankPartition{};
    out_.layout = std::move(layout);
    const auto tiles = static_cast<std::size_t>(config.num_tiles);
    tile_items_.assign(tiles, 0);
    involved_.assign(tiles, 0);
    sent_bytes_.assign(tiles, 0);
    sent_regions_.assign(tiles, 0);
    received_regions_.assign(tiles, 0);
    received_bytes_.assign(tiles, 0);
    effective_received_bytes_.assign(tiles, 0.0);
    link_cycles_.assign(tiles, 0);
    link_bytes_.assign(config.links.size(), 0);
    shared_ = find_shared_copies(program);
    if (spread_) {
      const auto ranks = static_cast<std::size_t>(partition.ranks);
      sends_to_.resize(ranks);
      receive_from_.assign(ranks, 0);
      rank_hit_.assign(ranks, 0);
    }
    if (functional_) resolve_buffer_addresses();
  }

  CompiledProgram compile() {
    out_.superstep_names.reserve(program_.steps.size());
    out_.phases.reserve(program_.steps.size() * 3);
    for (std::size_t s = 0; s < program_.steps.size(); ++s) {
      const auto& step = program_.steps[s];
      const auto step_index = index32(s, "supersteps");
      out_.superstep_names.push_back(step.name);
      compile_compute(step, step_index);
      // A sync separates a compute phase from the exchange after it; a program's last superstep with
      // nothing to exchange needs none (whatever runs next brings its own sync before its exchange).
      if (s + 1 == program_.steps.size() && step.exchange.empty()) continue;
      CompiledPhase sync;
      sync.kind = PhaseKind::sync;
      sync.superstep = step_index;
      sync.fixed_cycles = config_.sync_cycles;
      out_.phases.push_back(std::move(sync));
      compile_exchange(step, step_index);
    }
    if (spread_) place_receive_buffer();
    return std::move(out_);
  }

 private:
  std::string where(const Superstep& step) const { return "program " + program_.name + ": superstep " + step.name; }

  const BufferPlacement& placement(BufferId buffer) const {
    return out_.layout.buffers[static_cast<std::size_t>(buffer)];
  }

  std::byte* address(const BufferRef& ref) const {
    std::byte* base = out_.buffer_addresses[static_cast<std::size_t>(ref.buffer)];
    // A tile whose buffers are all empty has no arena; its refs are empty ranges.
    return base ? base + ref.offset_bytes : nullptr;
  }

  TileId tile_of(BufferId buffer) const { return placement(buffer).tile; }
  bool here(TileId tile) const { return partition_.owns(tile); }

  // Each buffer's bytes: its own place in its tile's arena, or its source's for a shared copy. A
  // source is used before its copies, so resolving in that order never revisits a buffer. Spread over
  // ranks, only this rank's buffers have bytes, and a shared copy whose source another rank holds
  // keeps its own place, which a message fills.
  void resolve_buffer_addresses() {
    const std::size_t count = program_.buffers.size();
    out_.buffer_addresses.assign(count, nullptr);
    out_.shared_copy.assign(count, 0);
    shares_bytes_.assign(count, 0);
    for (std::size_t b = 0; b < count; ++b) {
      const BufferPlacement& p = out_.layout.buffers[b];
      std::byte* base = here(p.tile) ? tile_bases_[static_cast<std::size_t>(p.tile)] : nullptr;
      out_.buffer_addresses[b] = base ? base + p.offset_bytes : nullptr;
    }
    for (const auto& step : program_.steps) {
      for (const auto& transfer : step.exchange.transfers) {
        if (!transfer.read_only_copies) continue;
        for (const auto& ref : transfer.dst) {
          if (!shared_copy(ref.buffer)) continue;
          // Read-only on every rank, whoever holds its bytes: a host write is refused alike everywhere.
          out_.shared_copy[static_cast<std::size_t>(ref.buffer)] = 1;
          if (!here(tile_of(ref.buffer)) || !here(tile_of(transfer.src.buffer))) continue;
          out_.buffer_addresses[static_cast<std::size_t>(ref.buffer)] = address(transfer.src);
          shares_bytes_[static_cast<std::size_t>(ref.buffer)] = 1;
        }
      }
    }
  }

  bool shared_copy(BufferId buffer) const {
    return buffer >= 0 && static_cast<std::size_t>(buffer) < shared_.size() && shared_[static_cast<std::size_t>(buffer)].shared;
  }

  // A shared copy whose bytes are its source's on this rank: it receives no copy.
  bool shares_bytes(BufferId buffer) const { return shares_bytes_[static_cast<std::size_t>(buffer)] != 0; }

  std::string buffer_name(BufferId buffer) const {
    return "buffer " + program_.buffers[static_cast<std::size_t>(buffer)].name + " (id " + str(buffer) + ")";
  }

  bool buffer_exists(BufferId buffer) const {
    return buffer >= 0 && static_cast<std::size_t>(buffer) < program_.buffers.size();
  }

  // [offset, offset + bytes) lies inside the buffer.
  bool in_range(const BufferRef& ref, std::int64_t bytes) const {
    if (!buffer_exists(ref.buffer)) return false;
    const auto capacity = placement(ref.buffer).bytes;
    return ref.offset_bytes >= 0 && ref.offset_bytes <= capacity && bytes <= capacity - ref.offset_bytes;
  }

  // Why in_range failed; messages are built only on failure, so valid programs load fast.
  std::string range_error(const BufferRef& ref, std::int64_t bytes) const {
    if (!buffer_exists(ref.buffer)) {
      return " refers to buffer id " + str(ref.buffer) + "; the program declares " +
             str(static_cast<std::int64_t>(program_.buffers.size())) + " buffers";
    }
    return " covers bytes [" + str(ref.offset_bytes) + ", " + str(ref.offset_bytes + bytes) + ") of " +
           buffer_name(ref.buffer) + ", which has " + str(placement(ref.buffer).bytes) + " bytes";
  }

  void touch(TileId tile) {
    auto& flag = involved_[static_cast<std::size_t>(tile)];
    if (!flag) {
      flag = 1;
      touched_.push_back(tile);
    }
  }

  // Items of the touched tiles laid out contiguously in ascending tile order: turns per-tile counts
  // into start positions from `base`.
  void counts_to_positions(std::uint32_t base) {
    std::uint32_t position = base;
    for (TileId tile : touched_) {
      auto& count = tile_items_[static_cast<std::size_t>(tile)];
      const auto n = count;
      count = position;
      position += n;
    }
  }

  void finish_phase(CompiledPhase& phase) {
    for (const auto& work : phase.tiles) {
      if (phase.slowest_tile < 0 || work.cycles > phase.slowest_cycles) {
        phase.slowest_cycles = work.cycles;
        phase.slowest_tile = work.tile;
      }
    }
    for (TileId tile : touched_) {
      const auto t = static_cast<std::size_t>(tile);
      tile_items_[t] = 0;
      involved_[t] = 0;
      sent_bytes_[t] = 0;
      sent_regions_[t] = 0;
      received_regions_[t] = 0;
      received_bytes_[t] = 0;
      effective_received_bytes_[t] = 0.0;
      link_cycles_[t] = 0;
    }
    touched_.clear();
    out_.phases.push_back(std::move(phase));
  }

  // Trace name of a tile's compute slice: its codelets, each once, in order of first appearance.
  std::uint32_t compute_label(const std::vector<std::uint32_t>& codelets) {
    bool all_same = std::all_of(codelets.begin(), codelets.end(), [&](std::uint32_t c) { return c == codelets[0]; });
    if (all_same) return codelets[0];
    std::vector<std::uint32_t> distinct;
    for (auto c : codelets) {
      if (std::find(distinct.begin(), distinct.end(), c) == distinct.end()) distinct.push_back(c);
    }
    std::string joined;
    for (auto c : distinct) joined += (joined.empty() ? "" : " + ") + labels_[c];
    return labels_.intern(joined);
  }

  void compile_compute(const Superstep& step, std::uint32_t step_index) {
    const auto& set = step.compute;
    if (set.empty()) return;
    const auto& vertices = set.vertices;
    const std::string context = where(step) + ": compute set " + set.name;

    for (std::size_t k = 0; k < vertices.size(); ++k) {
      const TileId tile = vertices[k].tile;
      if (tile < 0 || tile >= config_.num_tiles) {
        throw std::logic_error(context + ": vertex " + str(static_cast<std::int64_t>(k)) + " (" +
                               vertices[k].vertex.codelet + ") is on tile " + str(tile) + " of a " +
                               str(config_.num_tiles) + "-tile machine" + machine_suffix(config_));
      }
      touch(tile);
      ++tile_items_[static_cast<std::size_t>(tile)];
    }
    std::sort(touched_.begin(), touched_.end());
    // Group the vertices by tile, keeping declaration order within a tile (a counting sort).
    counts_to_positions(0);
    order_.resize(vertices.size());
    for (std::size_t k = 0; k < vertices.size(); ++k) {
      order_[tile_items_[static_cast<std::size_t>(vertices[k].tile)]++] = index32(k, context);
    }

    CompiledPhase phase;
    phase.kind = PhaseKind::compute;
    phase.superstep = step_index;
    phase.fixed_cycles = config_.compute_fixed_cycles;
    phase.tiles.reserve(touched_.size());
    std::uint32_t begin = 0;
    for (TileId tile : touched_) {
      const std::uint32_t end = tile_items_[static_cast<std::size_t>(tile)];
      tile_vertices_.clear();
      codelets_.clear();
      TileWork work;
      work.tile = tile;
      work.first = index32(out_.vertices.size(), context);
      for (std::uint32_t i = begin; i < end; ++i) {
        const auto k = order_[i];
        const Vertex& vertex = vertices[k].vertex;
        for (std::size_t r = 0; r < vertex.buffers.size(); ++r) {
          const BufferRef& ref = vertex.buffers[r];
          const bool ok = in_range(ref, 0);
          if (!ok || placement(ref.buffer).tile != tile) {
            const std::string ref_context = context + ": vertex " + str(k) + " (" + vertex.codelet + ") on tile " +
                                            str(tile) + ": buffer ref " + str(static_cast<std::int64_t>(r));
            if (!ok) throw std::logic_error(ref_context + range_error(ref, 0));
            throw std::logic_error(ref_context + ": " + buffer_name(ref.buffer) + " is on tile " +
                                   str(placement(ref.buffer).tile) + "; a vertex reads only its own tile's SRAM");
          }
        }
        tile_vertices_.push_back(&vertex);
        codelets_.push_back(labels_.intern(vertex.codelet));
        if (functional_ && here(tile)) {
          VertexItem item;
          item.execute = vertex.execute;
          item.first_address = index32(out_.addresses.size(), context);
          item.address_count = index32(vertex.buffers.size(), context);
          for (const auto& ref : vertex.buffers) out_.addresses.push_back(address(ref));
          out_.vertices.push_back(std::move(item));
        }
      }
      try {
        work.cycles = tile_compute_cycles(tile_vertices_, config_.worker_contexts);
      } catch (const std::logic_error& e) {
        throw std::logic_error(context + ": tile " + str(tile) + ": " + e.what());
      }
      work.count = index32(out_.vertices.size() - work.first, context);
      work.label = compute_label(codelets_);
      out_.vertex_count += end - begin;
      phase.tiles.push_back(work);
      begin = end;
    }
    finish_phase(phase);
  }

  // Adds one transfer's receptions. Tiles of one supertile that receive the same transfer share the
  // bus and receive at a multiple of the per-tile rate, so each counts bytes / (number receiving).
  void add_receptions(const Transfer& transfer) {
    if (transfer.dst.size() == 1) {
      const TileId tile = placement(transfer.dst[0].buffer).tile;
      touch(tile);
      received_bytes_[static_cast<std::size_t>(tile)] += transfer.total_bytes();
      received_regions_[static_cast<std::size_t>(tile)] += transfer.blocks;
      effective_received_bytes_[static_cast<std::size_t>(tile)] += static_cast<double>(transfer.total_bytes());
      return;
    }
    dst_tiles_.clear();
    for (const auto& ref : transfer.dst) dst_tiles_.push_back(placement(ref.buffer).tile);
    std::sort(dst_tiles_.begin(), dst_tiles_.end());
    const TileId per_supertile = config_.tiles_per_supertile;
    std::size_t run_begin = 0;
    while (run_begin < dst_tiles_.size()) {
      const TileId supertile = dst_tiles_[run_begin] / per_supertile;
      std::size_t run_end = run_begin;
      std::int64_t distinct_tiles = 0;
      while (run_end < dst_tiles_.size() && dst_tiles_[run_end] / per_supertile == supertile) {
        if (run_end == run_begin || dst_tiles_[run_end] != dst_tiles_[run_end - 1]) ++distinct_tiles;
        ++run_end;
      }
      for (std::size_t i = run_begin; i < run_end; ++i) {
        const TileId tile = dst_tiles_[i];
        touch(tile);
        received_bytes_[static_cast<std::size_t>(tile)] += transfer.total_bytes();
        received_regions_[static_cast<std::size_t>(tile)] += transfer.blocks;
        effective_received_bytes_[static_cast<std::size_t>(tile)] +=
            static_cast<double>(transfer.total_bytes()) / static_cast<double>(distinct_tiles);
      }
      run_begin = run_end;
    }
  }

  // The distinct chips other than the source's that a transfer's destinations lie on (a broadcast
  // crosses each link group once and fans out on the far chip).
  const std::vector<std::int32_t>& remote_chips(const Transfer& transfer) {
    remote_chips_.clear();
    const std::int32_t src_chip = config_.chip_of(placement(transfer.src.buffer).tile);
    for (const auto& ref : transfer.dst) {
      const std::int32_t chip = config_.chip_of(placement(ref.buffer).tile);
      if (chip != src_chip && std::find(remote_chips_.begin(), remote_chips_.end(), chip) == remote_chips_.end()) {
        remote_chips_.push_back(chip);
      }
    }
    return remote_chips_;
  }

  const std::vector<std::int32_t>& route(std::int32_t from_chip, std::int32_t to_chip) const {
    return config_.routes[static_cast<std::size_t>(from_chip * config_.num_chips() + to_chip)];
  }

  // Transfers between chips share the link groups they cross: each group moves all the phase's bytes
  // routed over it at its rate, so a crossing transfer lasts as long as its busiest group takes, plus
  // the latency of every group on its route. Its source and destination tiles cannot finish the phase
  // before it arrives. Returns whether any transfer crosses chips.
  bool add_link_cycles(const ExchangePlan& plan) {
    if (config_.num_chips() < 2) return false;
    std::fill(link_bytes_.begin(), link_bytes_.end(), 0);
    bool crosses = false;
    for (const Transfer& transfer : plan.transfers) {
      const std::int32_t src_chip = config_.chip_of(placement(transfer.src.buffer).tile);
      for (std::int32_t chip : remote_chips(transfer)) {
        crosses = true;
        for (std::int32_t link : route(src_chip, chip)) link_bytes_[static_cast<std::size_t>(link)] += transfer.total_bytes();
      }
    }
    if (!crosses) return false;
    for (const Transfer& transfer : plan.transfers) {
      const TileId src_tile = placement(transfer.src.buffer).tile;
      const std::int32_t src_chip = config_.chip_of(src_tile);
      for (std::int32_t chip : remote_chips(transfer)) {
        Cycles busiest = 0;
        Cycles latency = 0;
        const auto& links = route(src_chip, chip);
        for (std::int32_t link : links) {
          const auto l = static_cast<std::size_t>(link);
          busiest = std::max(busiest, static_cast<Cycles>(std::ceil(static_cast<double>(link_bytes_[l]) /
                                                                    config_.links[l].bytes_per_cycle)));
          const Cycles own = config_.links[l].latency_cycles;
          latency += own >= 0 ? own : config_.link_latency_cycles;
        }
        const Cycles cycles = busiest + latency;
        auto& src_cycles = link_cycles_[static_cast<std::size_t>(src_tile)];
        src_cycles = std::max(src_cycles, cycles);
        for (const auto& ref : transfer.dst) {
          const TileId tile = placement(ref.buffer).tile;
          if (config_.chip_of(tile) != chip) continue;
          auto& dst_cycles = link_cycles_[static_cast<std::size_t>(tile)];
          dst_cycles = std::max(dst_cycles, cycles);
        }
      }
    }
    return true;
  }

  // The copies this rank makes of a transfer: one per destination here that does not share its bytes.
  std::size_t copied_destinations(const Transfer& transfer) const {
    if (!transfer.read_only_copies && !spread_) return transfer.dst.size();
    std::size_t n = 0;
    for (const auto& ref : transfer.dst) n += here(tile_of(ref.buffer)) && !shares_bytes(ref.buffer) ? 1 : 0;
    return n;
  }

  // Spread over ranks: a transfer whose bytes cross ranks must read bytes that no transfer of the same
  // exchange writes. One process copies in source-tile order and a source written earlier in that
  // order sends the new bytes; a rank packs its messages before copying, so it would send the old ones.
  // Every rank checks the whole plan, so all refuse it alike. A copy of a region onto itself writes
  // what was there and is no write here.
  void check_cross_rank_sources(const ExchangePlan& plan, const std::string& context) {
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
      const std::int32_t from = partition_.owner(tile_of(transfer.src.buffer));
      bool crosses = false;
      for (const auto& ref : transfer.dst) crosses = crosses || partition_.owner(tile_of(ref.buffer)) != from;
      if (!crosses) continue;
      const Region src{transfer.src.buffer, transfer.src.offset_bytes,
                       transfer.src.offset_bytes + (transfer.blocks - 1) * transfer.src_stride_bytes + transfer.bytes};
      // The last written region of the buffer that begins before the source ends.
      auto it = std::lower_bound(written.begin(), written.end(), Region{src.buffer, src.end, 0});
      if (it == written.begin()) continue;
      const auto i = static_cast<std::size_t>(it - written.begin()) - 1;
      if (written[i].buffer == src.buffer && furthest[i] > src.begin) {
        throw std::logic_error(context + ": transfer " + str(static_cast<std::int64_t>(k)) + " sends " +
                               buffer_name(src.buffer) + " to another rank, but a transfer of the same exchange writes bytes it reads; " +
                               "a program spread over ranks must not read what its exchange writes");
      }
    }
  }

  // A transfer from this rank's tile to other ranks' tiles: one send to each such rank.
  void add_sends(const Transfer& transfer, const std::byte* src) {
    hit_ranks_.clear();
    for (const auto& ref : transfer.dst) {
      const std::int32_t q = partition_.owner(tile_of(ref.buffer));
      if (q == partition_.rank || rank_hit_[static_cast<std::size_t>(q)]) continue;
      rank_hit_[static_cast<std::size_t>(q)] = 1;
      hit_ranks_.push_back(q);
    }
    for (std::int32_t q : hit_ranks_) {
      rank_hit_[static_cast<std::size_t>(q)] = 0;
      sends_to_[static_cast<std::size_t>(q)].push_back({src, transfer.bytes, transfer.blocks, transfer.src_stride_bytes});
    }
  }

  // The phase's messages, from what add_sends and the received transfers gathered; the receiving
  // copies learn their place in the receive buffer.
  std::int32_t finish_messages(const std::string& context) {
    PhaseMessages m;
    const auto ranks = static_cast<std::size_t>(partition_.ranks);
    m.send_bytes.assign(ranks, 0);
    m.receive_bytes = receive_from_;
    for (std::size_t q = 0; q < ranks; ++q) {
      for (const RankSend& send : sends_to_[q]) m.send_bytes[q] += send.total_bytes();
      m.sends.insert(m.sends.end(), sends_to_[q].begin(), sends_to_[q].end());
      sends_to_[q].clear();
    }
    // Rank q's message lands after those of the ranks before it.
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

  // One buffer for every phase's received bytes (phases run one at a time); the copies that read
  // them get their addresses now that it exists.
  void place_receive_buffer() {
    if (receive_buffer_bytes_ == 0) return;
    out_.receive_buffer.reset(new std::byte[static_cast<std::size_t>(receive_buffer_bytes_)]);
    for (const auto& [copy, offset] : received_copies_) out_.copies[copy].src = out_.receive_buffer.get() + offset;
  }

  void compile_exchange(const Superstep& step, std::uint32_t step_index) {
    const auto& plan = step.exchange;
    if (plan.empty()) return;
    const std::string context = where(step) + ": exchange " + plan.name;

    for (std::size_t k = 0; k < plan.transfers.size(); ++k) {
      const Transfer& transfer = plan.transfers[k];
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
      if (!in_range(transfer.src, src_span)) {
        throw std::logic_error(transfer_context() + ": source" + range_error(transfer.src, src_span));
      }
      for (std::size_t d = 0; d < transfer.dst.size(); ++d) {
        if (!in_range(transfer.dst[d], dst_span)) {
          throw std::logic_error(transfer_context() + ": destination " + str(static_cast<std::int64_t>(d)) +
                                 range_error(transfer.dst[d], dst_span));
        }
      }
      const TileId src_tile = placement(transfer.src.buffer).tile;
      touch(src_tile);
      sent_bytes_[static_cast<std::size_t>(src_tile)] += transfer.total_bytes();
      sent_regions_[static_cast<std::size_t>(src_tile)] += transfer.blocks;
      // The source tile performs the copies on wake-up (functional mode); count them for grouping.
      if (functional_ && transfer.bytes > 0)
        tile_items_[static_cast<std::size_t>(src_tile)] += index32(copied_destinations(transfer), context);
      add_receptions(transfer);
      out_.exchange_bytes_sent += transfer.total_bytes();
      out_.exchange_bytes_received += transfer.total_bytes() * static_cast<std::int64_t>(transfer.dst.size());
    }
    std::sort(touched_.begin(), touched_.end());
    // The sync before this exchange (compile() pushed it last) spans the chips when the exchange does.
    if (add_link_cycles(plan)) out_.phases.back().fixed_cycles += config_.cross_chip_sync_cycles;
    if (spread_) check_cross_rank_sources(plan, context);

    const auto copies_base = index32(out_.copies.size(), context);
    std::int32_t messages = -1;
    if (functional_) {
      // Group the copies by source tile, keeping plan order within a tile (a counting sort). Spread
      // over ranks, a source tile of another rank has copies here too, reading its message, so each
      // rank makes its own tiles' copies in the order one process makes them.
      std::size_t total = 0;
      for (TileId tile : touched_) total += tile_items_[static_cast<std::size_t>(tile)];
      counts_to_positions(copies_base);
      out_.copies.resize(copies_base + total);
      for (const Transfer& transfer : plan.transfers) {
        if (transfer.bytes == 0) continue;
        const TileId src_tile = tile_of(transfer.src.buffer);
        auto& position = tile_items_[static_cast<std::size_t>(src_tile)];
        const bool src_here = here(src_tile);
        const std::byte* src = src_here ? address(transfer.src) : nullptr;
        std::int64_t src_stride_bytes = transfer.src_stride_bytes;
        std::int32_t from_rank = -1;
        std::int64_t received_at = 0;
        if (spread_ && src_here) add_sends(transfer, src);
        if (!src_here) {
          if (copied_destinations(transfer) == 0) continue;
          // Received once from the source's rank, packed: its blocks lie one after another.
          from_rank = partition_.owner(src_tile);
          received_at = receive_from_[static_cast<std::size_t>(from_rank)];
          receive_from_[static_cast<std::size_t>(from_rank)] += transfer.total_bytes();
          src_stride_bytes = transfer.bytes;
        }
        for (const auto& ref : transfer.dst) {
          // Another rank's destination, or a shared copy reading the source's bytes: no copy here.
          if (!here(tile_of(ref.buffer)) || shares_bytes(ref.buffer)) continue;
          if (from_rank >= 0) phase_received_.push_back({position, from_rank, received_at});
          out_.copies[position++] =
              CopyItem{src, address(ref), transfer.bytes, transfer.blocks, src_stride_bytes, transfer.dst_stride_bytes};
        }
      }
      if (spread_) messages = finish_messages(context);
    }

    CompiledPhase phase;
    phase.kind = PhaseKind::exchange;
    phase.superstep = step_index;
    phase.fixed_cycles = config_.exchange_fixed_cycles;
    phase.messages = messages;
    phase.tiles.reserve(touched_.size());
    const std::uint32_t label = labels_.intern(plan.name.empty() ? step.name : plan.name);
    std::uint32_t copies_begin = copies_base;
    for (TileId tile : touched_) {
      const auto t = static_cast<std::size_t>(tile);
      TileWork work;
      work.tile = tile;
      // Bytes at the exchange rate, plus a cost per contiguous region a tile sends or receives (each
      // region is its own exchange instruction sequence).
      work.cycles =
          std::max(tile_exchange_cycles(sent_bytes_[t], effective_received_bytes_[t], config_.exchange_bytes_per_cycle),
                   link_cycles_[t]) +
          config_.exchange_cycles_per_region * std::max(sent_regions_[t], received_regions_[t]);
      work.first = copies_begin;
      work.count = functional_ ? tile_items_[t] - copies_begin : 0;
      work.label = label;
      copies_begin += work.count;
      phase.bytes += received_bytes_[t];
      phase.tiles.push_back(work);
    }
    finish_phase(phase);
  }

  const Program& program_;
  const MachineConfig& config_;
  const bool functional_;
  const RankPartition partition_;
  const bool spread_;  // functional and spread over ranks
  const std::vector<std::byte*>& tile_bases_;
  CompiledProgram out_;
  LabelTable labels_;

  // Per-phase scratch, indexed by tile and reset for the touched tiles only, so a phase costs in
  // proportion to its work rather than to the machine's size.
  std::vector<TileId> touched_;
  std::vector<char> involved_;
  std::vector<std::uint32_t> tile_items_;
  std::vector<std::int64_t> sent_bytes_;
  std::vector<std::int64_t> sent_regions_;      // contiguous regions a tile sends (a broadcast counts once)
  std::vector<std::int64_t> received_regions_;  // contiguous regions a tile receives
  std::vector<std::int64_t> received_bytes_;
  std::vector<double> effective_received_bytes_;
  std::vector<std::uint32_t> order_;
  std::vector<const Vertex*> tile_vertices_;
  std::vector<std::uint32_t> codelets_;
  std::vector<TileId> dst_tiles_;
  std::vector<Cycles> link_cycles_;        // per tile: when its slowest transfer across chips arrives
  std::vector<std::int64_t> link_bytes_;   // per link group: bytes routed over it in this phase
  std::vector<std::int32_t> remote_chips_;
  std::vector<SharedSource> shared_;  // by buffer
  std::vector<char> shares_bytes_;    // by buffer: a shared copy whose source's bytes this rank holds

  // Spread over ranks: the current exchange's sends by destination rank, bytes received so far from
  // each rank, and the copies that read received bytes (at an offset into their rank's message);
  // then every such copy of the program with its offset into the receive buffer.
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

}  // namespace

void validate_config(const MachineConfig& config, std::int32_t tile_slots) {
  const std::string machine = "machine " + config.name + ": ";
  if (config.num_tiles < 1 || config.num_tiles > tile_slots) {
    throw std::logic_error(machine + "num_tiles is " + str(config.num_tiles) + "; the engine was elaborated with " +
                           str(tile_slots) + " tile slots (Engine::instance), so 1 to " + str(tile_slots) +
                           " tiles can be simulated");
  }
  if (!(config.clock_hz > 0) || !std::isfinite(config.clock_hz)) {
    throw std::logic_error(machine + "clock_hz must be positive, is " + std::to_string(config.clock_hz));
  }
  if (config.sram_bytes_per_tile < 0) throw std::logic_error(machine + "sram_bytes_per_tile is negative");
  if (config.worker_contexts < 1) {
    throw std::logic_error(machine + "worker_contexts must be at least 1, is " + str(config.worker_contexts));
  }
  if (config.tiles_per_supertile < 1) {
    throw std::logic_error(machine + "tiles_per_supertile must be at least 1, is " + str(config.tiles_per_supertile));
  }
  if (!(config.exchange_bytes_per_cycle > 0) || !std::isfinite(config.exchange_bytes_per_cycle)) {
    throw std::logic_error(machine + "exchange_bytes_per_cycle must be positive, is " +
                           std::to_string(config.exchange_bytes_per_cycle));
  }
  if (config.sync_cycles < 0 || config.exchange_fixed_cycles < 0 || config.compute_fixed_cycles < 0 ||
      config.exchange_cycles_per_region < 0) {
    throw std::logic_error(machine +
                           "sync_cycles, exchange_fixed_cycles, compute_fixed_cycles and exchange_cycles_per_region must not be negative");
  }
  if (config.tiles_per_chip < 0 || (config.tiles_per_chip > 0 && config.num_tiles % config.tiles_per_chip != 0)) {
    throw std::logic_error(machine + "tiles_per_chip (" + str(config.tiles_per_chip) + ") must be 0 or divide num_tiles (" +
                           str(config.num_tiles) + ")");
  }
  const std::int32_t chips = config.num_chips();
  if (chips > 1) {
    if (config.routes.size() != static_cast<std::size_t>(chips) * static_cast<std::size_t>(chips)) {
      throw std::logic_error(machine + "routes must hold num_chips^2 = " + str(std::int64_t{chips} * chips) + " entries, holds " +
                             str(static_cast<std::int64_t>(config.routes.size())));
    }
    for (const auto& link : config.links) {
      if (!(link.bytes_per_cycle > 0) || !std::isfinite(link.bytes_per_cycle) || link.from_chip < 0 ||
          link.from_chip >= chips || link.to_chip < 0 || link.to_chip >= chips) {
        throw std::logic_error(machine + "a link from chip " + str(link.from_chip) + " to chip " + str(link.to_chip) +
                               " is outside the machine or has no bandwidth");
      }
    }
    for (std::int32_t from = 0; from < chips; ++from) {
      for (std::int32_t to = 0; to < chips; ++to) {
        const auto& r = config.routes[static_cast<std::size_t>(from * chips + to)];
        std::int32_t at = from;
        for (std::int32_t link : r) {
          if (link < 0 || static_cast<std::size_t>(link) >= config.links.size() ||
              config.links[static_cast<std::size_t>(link)].from_chip != at) {
            throw std::logic_error(machine + "the route from chip " + str(from) + " to chip " + str(to) + " is broken");
          }
          at = config.links[static_cast<std::size_t>(link)].to_chip;
        }
        if (at != to || (from != to && r.empty())) {
          throw std::logic_error(machine + "the route from chip " + str(from) + " to chip " + str(to) + " does not arrive");
        }
      }
    }
  }
  if (config.link_latency_cycles < 0 || config.cross_chip_sync_cycles < 0) {
    throw std::logic_error(machine + "link_latency_cycles and cross_chip_sync_cycles must not be negative");
  }
}

BufferLayout lay_out_buffers(const Program& program, const MachineConfig& config) {
  BufferLayout layout;
  layout.buffers.reserve(program.buffers.size());
  layout.tile_bytes.assign(static_cast<std::size_t>(config.num_tiles), 0);
  for (std::size_t b = 0; b < program.buffers.size(); ++b) {
    const BufferDecl& decl = program.buffers[b];
    if (decl.tile < 0 || decl.tile >= config.num_tiles) {
      throw std::logic_error("program " + program.name + ": buffer " + decl.name + " is on tile " + str(decl.tile) +
                             " of a " + str(config.num_tiles) + "-tile machine" + machine_suffix(config));
    }
    if (decl.bytes < 0) {
      throw std::logic_error("program " + program.name + ": buffer " + decl.name + " has " + str(decl.bytes) +
                             " bytes");
    }
    auto& used = layout.tile_bytes[static_cast<std::size_t>(decl.tile)];
    const std::int64_t offset = align_buffer_offset(used);
    layout.buffers.push_back({decl.tile, offset, decl.bytes});
    used = offset + decl.bytes;
  }

  TileId first_over = -1, worst_over = -1;
  std::int64_t tiles_over = 0;
  for (TileId tile = 0; tile < config.num_tiles; ++tile) {
    const auto used = layout.tile_bytes[static_cast<std::size_t>(tile)];
    if (used > layout.peak_tile_bytes) {
      layout.peak_tile_bytes = used;
      layout.peak_tile = tile;
    }
    if (used > config.sram_bytes_per_tile) {
      ++tiles_over;
      if (first_over < 0) first_over = tile;
      if (worst_over < 0 || used > layout.tile_bytes[static_cast<std::size_t>(worst_over)]) worst_over = tile;
    }
  }
  if (tiles_over > 0) {
    std::string message = "program " + program.name + ": tile " + str(first_over) + " needs " +
                          str(layout.tile_bytes[static_cast<std::size_t>(first_over)]) + " bytes of SRAM but has " +
                          str(config.sram_bytes_per_tile) + machine_suffix(config);
    if (tiles_over > 1) {
      message += "; " + str(tiles_over - 1) + (tiles_over == 2 ? " more tile overflows" : " more tiles overflow") +
                 ", the worst is tile " + str(worst_over) + " needing " +
                 str(layout.tile_bytes[static_cast<std::size_t>(worst_over)]) + " bytes";
    }
    throw PlanError(message);
  }
  return layout;
}

CompiledProgram compile_program(const Program& program, const MachineConfig& config, Mode mode, BufferLayout layout,
                                const std::vector<std::byte*>& tile_bases, const RankPartition& partition) {
  return Compiler(program, config, mode, std::move(layout), tile_bases, partition).compile();
}

}  // namespace tilesim::sim
