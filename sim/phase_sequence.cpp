#include "sim/phase_sequence.hpp"

namespace tilesim::sim {

PhaseStats phase_stats(const CompiledProgram& program, const CompiledPhase& phase, Cycles start_cycle, Cycles cycles) {
  PhaseStats stats;
  stats.name = program.superstep_names[phase.superstep];
  stats.kind = phase.kind;
  stats.start_cycle = start_cycle;
  stats.cycles = cycles;
  stats.slowest_tile = phase.slowest_tile;
  stats.active_tiles = static_cast<std::int32_t>(phase.tiles.size());
  stats.bytes = phase.bytes;
  return stats;
}

void sequence_phases(const CompiledProgram& program, RunStats& stats) {
  Cycles start_cycle = 0;
  for (const CompiledPhase& phase : program.phases) {
    const Cycles cycles = phase.fixed_cycles + phase.slowest_cycles;
    stats.phases.push_back(phase_stats(program, phase, start_cycle, cycles));
    start_cycle += cycles;
  }
}

}  // namespace tilesim::sim
