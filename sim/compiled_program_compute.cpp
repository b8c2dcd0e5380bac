// Compute phases (compiled_program_compute.hpp).
#include "sim/compiled_program_compute.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "sim/tile_cost.hpp"

namespace tilesim::sim::compile {

ComputePass::ComputePass(const Program& program, const MachineConfig& config, const ProgramBuffers& buffers,
                         PhaseTiles& tiles, LabelTable& labels, CompiledProgram& out)
    : program_(program),
      config_(config),
      functional_(out.mode == Mode::functional),
      buffers_(buffers),
      tiles_(tiles),
      labels_(labels),
      out_(out) {}

void ComputePass::compile(const Superstep& step, std::uint32_t step_index) {
  const auto& set = step.compute;
  if (set.empty()) return;
  const auto& vertices = set.vertices;
  const std::string context = where(program_, step) + ": compute set " + set.name;
  group_by_tile(vertices, context);

  CompiledPhase phase;
  phase.kind = PhaseKind::compute;
  phase.superstep = step_index;
  phase.fixed_cycles = config_.compute_fixed_cycles;
  phase.tiles.reserve(tiles_.touched().size());
  std::uint32_t begin = 0;
  for (TileId tile : tiles_.touched()) {
    const std::uint32_t end = tiles_.items(tile);
    phase.tiles.push_back(tile_work(tile, vertices, begin, end, context));
    begin = end;
  }
  tiles_.finish(phase, out_.phases);
}

// Touches every vertex's tile and leaves order_ listing the vertices by tile, in declaration order
// within a tile (a counting sort), and each tile's items at the end of its run in order_.
void ComputePass::group_by_tile(const std::vector<TileVertex>& vertices, const std::string& context) {
  for (std::size_t k = 0; k < vertices.size(); ++k) {
    const TileId tile = vertices[k].tile;
    if (tile < 0 || tile >= config_.num_tiles) {
      throw std::logic_error(context + ": vertex " + str(static_cast<std::int64_t>(k)) + " (" +
                             vertices[k].vertex.codelet + ") is on tile " + str(tile) + " of a " +
                             str(config_.num_tiles) + "-tile machine" + machine_suffix(config_));
    }
    tiles_.touch(tile);
    ++tiles_.items(tile);
  }
  tiles_.sort_touched();
  tiles_.counts_to_positions(0);
  order_.resize(vertices.size());
  for (std::size_t k = 0; k < vertices.size(); ++k) {
    order_[tiles_.items(vertices[k].tile)++] = index32(k, context);
  }
}

// One tile's share of the phase: its vertices order_[begin, end).
TileWork ComputePass::tile_work(TileId tile, const std::vector<TileVertex>& vertices, std::uint32_t begin,
                                std::uint32_t end, const std::string& context) {
  tile_vertices_.clear();
  codelets_.clear();
  TileWork work;
  work.tile = tile;
  work.first = index32(out_.vertices.size(), context);
  for (std::uint32_t i = begin; i < end; ++i) {
    const auto k = order_[i];
    const Vertex& vertex = vertices[k].vertex;
    check_refs(vertex, k, tile, context);
    tile_vertices_.push_back(&vertex);
    codelets_.push_back(labels_.intern(vertex.codelet));
    if (functional_ && buffers_.here(tile)) add_vertex_item(vertex, context);
  }
  try {
    work.cycles = tile_compute_cycles(tile_vertices_, config_.worker_contexts);
  } catch (const std::logic_error& e) {
    throw std::logic_error(context + ": tile " + str(tile) + ": " + e.what());
  }
  work.count = index32(out_.vertices.size() - work.first, context);
  work.label = compute_label(codelets_);
  out_.vertex_count += end - begin;
  return work;
}

// A vertex reads only buffers of its own tile, within their bytes.
void ComputePass::check_refs(const Vertex& vertex, std::uint32_t k, TileId tile, const std::string& context) const {
  for (std::size_t r = 0; r < vertex.buffers.size(); ++r) {
    const BufferRef& ref = vertex.buffers[r];
    const bool ok = buffers_.in_range(ref, 0);
    if (!ok || buffers_.placement(ref.buffer).tile != tile) {
      const std::string ref_context = context + ": vertex " + str(k) + " (" + vertex.codelet + ") on tile " +
                                      str(tile) + ": buffer ref " + str(static_cast<std::int64_t>(r));
      if (!ok) throw std::logic_error(ref_context + buffers_.range_error(ref, 0));
      throw std::logic_error(ref_context + ": " + buffers_.name(ref.buffer) + " is on tile " +
                             str(buffers_.placement(ref.buffer).tile) + "; a vertex reads only its own tile's SRAM");
    }
  }
}

// What the tile runs for the vertex on wake-up: its body and the addresses of its buffer refs.
void ComputePass::add_vertex_item(const Vertex& vertex, const std::string& context) {
  VertexItem item;
  item.execute = vertex.execute;
  item.first_address = index32(out_.addresses.size(), context);
  item.address_count = index32(vertex.buffers.size(), context);
  for (const auto& ref : vertex.buffers) out_.addresses.push_back(buffers_.address(ref));
  out_.vertices.push_back(std::move(item));
}

// Trace name of a tile's compute slice: its codelets, each once, in order of first appearance.
std::uint32_t ComputePass::compute_label(const std::vector<std::uint32_t>& codelets) {
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

}  // namespace tilesim::sim::compile
