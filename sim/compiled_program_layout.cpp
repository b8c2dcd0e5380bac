// Where a program's buffers lie in the tiles' SRAM (lay_out_buffers, sim/compiled_program.hpp), and the
// error that names the tiles that overflow.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/error.hpp"
#include "sim/compiled_program.hpp"
#include "sim/compiled_program_phase.hpp"

namespace tilesim::sim {

BufferLayout lay_out_buffers(const Program& program, const MachineConfig& config) {
  using compile::machine_suffix;
  using compile::str;
  BufferLayout layout;
  layout.buffers.reserve(program.buffers.size());
  layout.tile_bytes.assign(static_cast<std::size_t>(config.num_tiles), 0);
  for (std::size_t b = 0; b < program.buffers.size(); ++b) {
    const BufferDecl& decl = program.buffers[b];
    if (decl.tile < 0 || decl.tile >= config.num_tiles) {
      throw std::logic_error("program " + program.name + ": buffer " + program.name_of(decl) + " is on tile " + str(decl.tile) +
                             " of a " + str(config.num_tiles) + "-tile machine" + machine_suffix(config));
    }
    if (decl.bytes < 0) {
      throw std::logic_error("program " + program.name + ": buffer " + program.name_of(decl) + " has " + str(decl.bytes) +
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

}  // namespace tilesim::sim
