#pragma once
// A superstep's compute phase: its vertices checked and grouped by tile, each tile's cycles from its
// vertices' costs (sim/tile_cost.hpp), and in functional mode what each of this rank's tiles runs on
// wake-up (CompiledProgram::vertices and ::addresses). Engine-internal.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/compiled_program.hpp"
#include "sim/compiled_program_buffers.hpp"
#include "sim/compiled_program_phase.hpp"

namespace tilesim::sim::compile {

class ComputePass {
 public:
  ComputePass(const Program& program, const MachineConfig& config, const ProgramBuffers& buffers, PhaseTiles& tiles,
              LabelTable& labels, CompiledProgram& out);

  // Appends the superstep's compute phase to out.phases, unless its compute set is empty.
  void compile(const Superstep& step, std::uint32_t step_index);

 private:
  void group_by_tile(const std::vector<TileVertex>& vertices, const std::string& context);
  TileWork tile_work(TileId tile, const std::vector<TileVertex>& vertices, std::uint32_t begin, std::uint32_t end,
                     const std::string& context);
  void check_refs(const Vertex& vertex, std::uint32_t k, TileId tile, const std::string& context) const;
  void add_vertex_item(const Vertex& vertex, const std::string& context);
  std::uint32_t compute_label(const std::vector<std::uint32_t>& codelets);

  const Program& program_;
  const MachineConfig& config_;
  const bool functional_;
  const ProgramBuffers& buffers_;
  PhaseTiles& tiles_;
  LabelTable& labels_;
  CompiledProgram& out_;

  // Scratch reused from phase to phase: the vertices in tile order, and one tile's vertices and codelets.
  std::vector<std::uint32_t> order_;
  std::vector<const Vertex*> tile_vertices_;
  std::vector<std::uint32_t> codelets_;
};

}  // namespace tilesim::sim::compile
