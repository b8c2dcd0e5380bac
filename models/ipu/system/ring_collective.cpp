#include "models/ipu/system/ring_collective.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "models/ipu/machine/codelet_costs.hpp"
#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/planning/linear_layout.hpp"
#include "models/ipu/system/system_collectives.hpp"

namespace tilesim::ipu {

TileRange ring_piece(const TileRange& range, std::int64_t parts, std::int64_t j) {
  const std::int64_t n = range.size();
  return {range.begin + n * j / parts, range.begin + n * (j + 1) / parts};
}

std::vector<std::int32_t> hamiltonian_ring(const IpuMachine& system) {
  const std::int32_t n = system.system.num_ipus;
  const std::int32_t per_machine = system.system.ipus_per_machine > 0 ? system.system.ipus_per_machine : n;
  std::vector<std::int32_t> order;
  order.reserve(static_cast<std::size_t>(n));
  if (n == 1) return {0};
  for (std::int32_t base = 0; base < n; base += per_machine) {
    // Entry IPU (rung 0, side 0), up side 1, down side 0 to the exit IPU (rung 1, side 0).
    order.push_back(base);
    for (std::int32_t c = base + 1; c < base + per_machine; c += 2) order.push_back(c);
    for (std::int32_t c = base + per_machine - 2; c >= base + 2; c -= 2) order.push_back(c);
  }
  return order;
}

RingCollectiveBuilder::RingCollectiveBuilder(const IpuMachine& system, std::int64_t elements_per_ipu, std::string name)
    : system_(system) {
  program_.name = std::move(name);
  const IpuMachine chip = ipu_subsystem(system, 1);
  const LinearLayout layout = linear_layout(elements_per_ipu, kFloat32Bytes, chip);
  tiles_used_ = elements_per_ipu > 0 ? layout.tiles_used : 0;
  for (std::int64_t t = 0; t < tiles_used_; ++t) {
    const Range r = layout.tile_range(t);
    tile_first_.push_back(r.begin);
    tile_elements_.push_back(r.end - r.begin);
  }
  const std::int32_t ipus = system.system.num_ipus;
  // The largest piece a tile receives in one step: its share split over the smallest ring (2 members).
  for (std::int32_t ipu = 0; ipu < ipus; ++ipu) {
    for (std::int64_t t = 0; t < tiles_used_; ++t) {
      const std::int64_t bytes = tile_elements_[static_cast<std::size_t>(t)] * kFloat32Bytes;
      acc_.push_back(program_.add_buffer("acc", global_tile(ipu, t), bytes));
      recv_.push_back(program_.add_buffer("recv", global_tile(ipu, t), (bytes / kFloat32Bytes + 1) / 2 * kFloat32Bytes));
    }
  }
}

sim::TileId RingCollectiveBuilder::global_tile(std::int32_t ipu, std::int64_t tile) const {
  const std::int64_t per_chip = system_.chip.tiles_per_chip > 0 ? system_.chip.tiles_per_chip : system_.chip.num_tiles;
  return static_cast<sim::TileId>(ipu * per_chip + tile);
}

sim::BufferId RingCollectiveBuilder::acc_buffer(std::int32_t ipu, std::int64_t tile) const {
  return acc_[static_cast<std::size_t>(ipu * tiles_used_ + tile)];
}

TileRegion RingCollectiveBuilder::whole() const {
  TileRegion region;
  for (auto n : tile_elements_) region.push_back({0, n});
  return region;
}

TileRegion RingCollectiveBuilder::owned_after_reduce_scatter(const TileRegion& region, std::int64_t ring_size,
                                                              std::int64_t position) const {
  TileRegion owned;
  for (const auto& r : region) owned.push_back(ring_piece(r, ring_size, (position + 1) % ring_size));
  return owned;
}

void RingCollectiveBuilder::add_sums(sim::ComputeSet& compute, std::int32_t ipu, const TileRegion& region,
                                     std::int64_t parts, std::int64_t j) {
  const CodeletCosts& c = float32_partial_codelets(system_);
  for (std::int64_t t = 0; t < tiles_used_; ++t) {
    const TileRange piece = ring_piece(region[static_cast<std::size_t>(t)], parts, j);
    if (piece.size() == 0) continue;
    sim::Vertex v;
    v.codelet = "ReduceAdd";
    v.supervisor_cycles = c.supervisor_cycles;
    v.worker_cycles = worker_split_cycles(piece.size(), system_.chip.worker_contexts,
                                          [&](std::int64_t k) { return binary_worker_cycles(BinaryFn::add, k, c); });
    v.buffers = {{acc_buffer(ipu, t), piece.begin * kFloat32Bytes}, {recv_[static_cast<std::size_t>(ipu * tiles_used_ + t)], 0}};
    const std::int64_t n = piece.size();
    v.execute = [n](const sim::VertexContext& ctx) {
      float* acc = ctx.as<float>(0);
      const float* in = ctx.as<float>(1);
      for (std::int64_t i = 0; i < n; ++i) acc[i] += in[i];
    };
    compute.vertices.push_back({global_tile(ipu, t), std::move(v)});
  }
}

sim::ComputeSet RingCollectiveBuilder::take_pending(const std::string& name) {
  sim::ComputeSet compute;
  compute.name = name;
  for (const auto& p : pending_) add_sums(compute, p.ipu, p.region, p.parts, p.piece);
  pending_.clear();
  return compute;
}

void RingCollectiveBuilder::ring_step(const std::vector<std::vector<std::int32_t>>& rings,
                                      const std::vector<TileRegion>& ring_regions, std::int64_t s, bool gather) {
  const auto size = static_cast<std::int64_t>(rings.front().size());
  sim::Superstep step;
  step.name = program_.name + (gather ? ".all_gather." : ".reduce_scatter.") + std::to_string(s);
  step.compute = take_pending(step.name + ".sum");
  step.exchange.name = step.name;
  for (std::size_t r = 0; r < rings.size(); ++r) {
    const auto& ring = rings[r];
    if (static_cast<std::int64_t>(ring.size()) != size) throw std::logic_error("ring collective: rings of unequal size");
    const TileRegion& region = ring_regions[r];
    for (std::int64_t q = 0; q < size; ++q) {
      const std::int32_t from = ring[static_cast<std::size_t>(q)];
      const std::int32_t to = ring[static_cast<std::size_t>((q + 1) % size)];
      // Reduce-scatter: member q passes on piece q - s, summed so far. All-gather: member q holds the sum of
      // piece q + 1 after the reduce-scatter and passes on piece q + 1 - s, the one it last received.
      const std::int64_t j = ((q - s + (gather ? 1 : 0)) % size + size) % size;
      for (std::int64_t t = 0; t < tiles_used_; ++t) {
        const TileRange piece = ring_piece(region[static_cast<std::size_t>(t)], size, j);
        if (piece.size() == 0) continue;
        sim::Transfer x;
        x.src = {acc_buffer(from, t), piece.begin * kFloat32Bytes};
        x.bytes = piece.size() * kFloat32Bytes;
        x.dst = {gather ? sim::BufferRef{acc_buffer(to, t), piece.begin * kFloat32Bytes}
                        : sim::BufferRef{recv_[static_cast<std::size_t>(to * tiles_used_ + t)], 0}};
        step.exchange.transfers.push_back(std::move(x));
      }
      if (!gather) pending_.push_back({to, region, size, j});
    }
  }
  program_.steps.push_back(std::move(step));
}

void RingCollectiveBuilder::reduce_scatter(const std::vector<std::vector<std::int32_t>>& rings,
                                           const std::vector<TileRegion>& ring_regions) {
  if (rings.empty()) return;
  for (std::int64_t s = 0; s + 1 < static_cast<std::int64_t>(rings.front().size()); ++s) ring_step(rings, ring_regions, s, false);
}

void RingCollectiveBuilder::finish() {
  if (pending_.empty()) return;
  sim::Superstep step;
  step.name = program_.name + ".sum";
  step.compute = take_pending(step.name);
  program_.steps.push_back(std::move(step));
}

void RingCollectiveBuilder::all_gather(const std::vector<std::vector<std::int32_t>>& rings,
                                       const std::vector<TileRegion>& ring_regions) {
  if (rings.empty()) return;
  for (std::int64_t s = 0; s + 1 < static_cast<std::int64_t>(rings.front().size()); ++s) ring_step(rings, ring_regions, s, true);
}

}  // namespace tilesim::ipu
