#include "models/ipu/system/pipeline_program.hpp"

#include <algorithm>
#include <string>

#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/planning/linear_layout.hpp"
#include "models/ipu/system/system_collectives.hpp"

namespace tilesim::ipu {

namespace {

// The buffers of one boundary: the sender's tiles and the receiver's, one per used tile of a linear layout.
struct BoundaryBuffers {
  std::vector<sim::BufferId> lower;  // on stage s (activations out, gradients in)
  std::vector<sim::BufferId> upper;  // on stage s + 1 (activations in, gradients out)
  std::vector<std::int64_t> bytes;   // per used tile
};

}  // namespace

sim::Program pipeline_program(const IpuMachine& system, std::int32_t first_ipu, const std::vector<sim::Cycles>& forward_cycles,
                              const std::vector<sim::Cycles>& backward_cycles, const std::vector<std::int64_t>& boundary_bytes,
                              const LockstepSchedule& schedule) {
  sim::Program program;
  program.name = "pipeline";
  const auto stages = forward_cycles.size();
  const std::int64_t tiles_per_ipu = system.chip.tiles_per_chip > 0 ? system.chip.tiles_per_chip : system.chip.num_tiles;
  auto tile_of = [&](std::size_t stage, std::int64_t t) {
    return static_cast<sim::TileId>((first_ipu + static_cast<std::int64_t>(stage)) * tiles_per_ipu + t);
  };
  const IpuMachine chip = ipu_subsystem(system, 1);
  std::vector<BoundaryBuffers> boundaries(boundary_bytes.size());
  for (std::size_t s = 0; s < boundary_bytes.size(); ++s) {
    const std::int64_t elements = (boundary_bytes[s] + kFloat32Bytes - 1) / kFloat32Bytes;
    if (elements == 0) continue;
    const LinearLayout layout = linear_layout(elements, kFloat32Bytes, chip);
    for (std::int64_t t = 0; t < layout.tiles_used; ++t) {
      const Range r = layout.tile_range(t);
      const std::int64_t bytes = (r.end - r.begin) * kFloat32Bytes;
      boundaries[s].bytes.push_back(bytes);
      boundaries[s].lower.push_back(program.add_buffer("boundary" + std::to_string(s), tile_of(s, t), bytes));
      boundaries[s].upper.push_back(program.add_buffer("boundary" + std::to_string(s), tile_of(s + 1, t), bytes));
    }
  }
  const std::int64_t workers = system.chip.worker_contexts;
  for (std::size_t c = 0; c < schedule.cycles.size(); ++c) {
    const PipelineCycle& cycle = schedule.cycles[c];
    sim::Superstep step;
    step.name = "pipeline.cycle." + std::to_string(c);
    step.compute.name = step.name;
    step.exchange.name = step.name;
    for (std::size_t s = 0; s < stages; ++s) {
      sim::Cycles cycles = 0;
      if (cycle.forward[s] >= 0) cycles += forward_cycles[s];
      if (cycle.backward[s] >= 0) cycles += backward_cycles[s];
      if (cycles > 0) {
        // The stage's own simulation gave its length in tile cycles: one worker context's share of it.
        sim::Vertex v;
        v.codelet = "Stage";
        v.worker_cycles = {(cycles + workers - 1) / workers};
        step.compute.vertices.push_back({tile_of(s, 0), std::move(v)});
      }
      auto send = [&](const std::vector<sim::BufferId>& from, const std::vector<sim::BufferId>& to,
                      const std::vector<std::int64_t>& bytes) {
        for (std::size_t t = 0; t < from.size(); ++t) {
          sim::Transfer x;
          x.src = {from[t], 0};
          x.bytes = bytes[t];
          x.dst = {{to[t], 0}};
          step.exchange.transfers.push_back(std::move(x));
        }
      };
      if (cycle.forward[s] >= 0 && s + 1 < stages) send(boundaries[s].lower, boundaries[s].upper, boundaries[s].bytes);
      if (cycle.backward[s] >= 0 && s > 0) send(boundaries[s - 1].upper, boundaries[s - 1].lower, boundaries[s - 1].bytes);
    }
    program.steps.push_back(std::move(step));
  }
  return program;
}

}  // namespace tilesim::ipu
