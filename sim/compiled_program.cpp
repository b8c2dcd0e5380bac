// compile_program: a loaded program's phases, superstep by superstep. Each pass builds one kind of
// phase (compiled_program_compute.hpp, compiled_program_exchange.hpp) over the shared view of the
// program's buffers (compiled_program_buffers.hpp); the configuration checks and the buffer layout are
// compiled_program_config.cpp and compiled_program_layout.cpp.
#include "sim/compiled_program.hpp"

#include <utility>

#include "sim/compiled_program_buffers.hpp"
#include "sim/compiled_program_compute.hpp"
#include "sim/compiled_program_exchange.hpp"
#include "sim/compiled_program_phase.hpp"

namespace tilesim::sim {

namespace {

// What a compiled program knows before its first phase.
CompiledProgram compiled_program_header(const Program& program, const MachineConfig& config, Mode mode,
                                        BufferLayout layout, const RankPartition& partition) {
  CompiledProgram out;
  out.name = program.name;
  out.config = config;
  out.mode = mode;
  // Timing-only programs are never spread: they have no bytes to keep apart.
  const bool spread = mode == Mode::functional && partition.distributed();
  out.partition = spread ? partition : RankPartition{};
  out.layout = std::move(layout);
  return out;
}

class Compiler {
 public:
  Compiler(const Program& program, const MachineConfig& config, Mode mode, BufferLayout layout,
           const std::vector<std::byte*>& tile_bases, const RankPartition& partition)
      : program_(program),
        config_(config),
        out_(compiled_program_header(program, config, mode, std::move(layout), partition)),
        labels_(out_.labels),
        tiles_(config.num_tiles),
        buffers_(program, out_, partition, tile_bases),
        compute_(program, config, buffers_, tiles_, labels_, out_),
        exchange_(program, config, buffers_, tiles_, labels_, out_) {}

  CompiledProgram compile() {
    out_.superstep_names.reserve(program_.steps.size());
    out_.phases.reserve(program_.steps.size() * 3);
    for (std::size_t s = 0; s < program_.steps.size(); ++s) {
      const auto& step = program_.steps[s];
      const auto step_index = compile::index32(s, "supersteps");
      out_.superstep_names.push_back(step.name);
      compute_.compile(step, step_index);
      // A sync separates a compute phase from the exchange after it; a program's last superstep with
      // nothing to exchange needs none (whatever runs next brings its own sync before its exchange).
      if (s + 1 == program_.steps.size() && step.exchange.empty()) continue;
      CompiledPhase sync;
      sync.kind = PhaseKind::sync;
      sync.superstep = step_index;
      sync.fixed_cycles = config_.sync_cycles;
      out_.phases.push_back(std::move(sync));
      exchange_.compile(step, step_index);
    }
    exchange_.finish();
    return std::move(out_);
  }

 private:
  // In this order: each member below refers to those above it.
  const Program& program_;
  const MachineConfig& config_;
  CompiledProgram out_;
  compile::LabelTable labels_;
  compile::PhaseTiles tiles_;
  compile::ProgramBuffers buffers_;
  compile::ComputePass compute_;
  compile::ExchangePass exchange_;
};

}  // namespace

CompiledProgram compile_program(const Program& program, const MachineConfig& config, Mode mode, BufferLayout layout,
                                const std::vector<std::byte*>& tile_bases, const RankPartition& partition) {
  return Compiler(program, config, mode, std::move(layout), tile_bases, partition).compile();
}

}  // namespace tilesim::sim
