#pragma once
// A superstep's exchange phase: its transfers checked, each tile's cycles (ExchangeTiming), and in
// functional mode the copies each of this rank's tiles makes on wake-up, grouped by source tile
// (CompiledProgram::copies), with the messages to and from other ranks when the program is spread over
// them (RankMessages). Engine-internal.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "sim/compiled_program.hpp"
#include "sim/compiled_program_buffers.hpp"
#include "sim/compiled_program_exchange_timing.hpp"
#include "sim/compiled_program_messages.hpp"
#include "sim/compiled_program_phase.hpp"

namespace tilesim::sim::compile {

class ExchangePass {
 public:
  // Spread over ranks when out.partition is (compile_program keeps a partition only for a functional
  // program spread over ranks).
  ExchangePass(const Program& program, const MachineConfig& config, const ProgramBuffers& buffers, PhaseTiles& tiles,
               LabelTable& labels, CompiledProgram& out);

  // Appends the superstep's exchange phase to out.phases, unless its plan is empty; the sync before it,
  // which compile_program appended last, spans the chips when the exchange does.
  void compile(const Superstep& step, std::uint32_t step_index);

  // After the last phase: the receive buffer of a program spread over ranks.
  void finish();

 private:
  void tally_transfers(const ExchangePlan& plan, const std::string& context);
  void check_transfer(const Transfer& transfer, std::size_t k, const std::string& context) const;
  void tally_tile_sums(const ExchangePlan& plan, const std::string& context);
  void tally_broadcast_counts(const ExchangePlan& plan, const std::string& context);
  [[noreturn]] void throw_bad_count(const TransferCount& count, std::size_t k, const std::string& context) const;
  std::int32_t lay_out_copies(const ExchangePlan& plan, std::uint32_t copies_base, const std::string& context);
  void lay_out_transfer_copies(const Transfer& transfer);
  void append_phase(const Superstep& step, std::uint32_t step_index, std::uint32_t copies_base, std::int32_t messages);
  std::size_t copied_destinations(const Transfer& transfer) const;

  const Program& program_;
  const MachineConfig& config_;
  const bool functional_;
  const bool spread_;  // functional and spread over ranks
  const ProgramBuffers& buffers_;
  PhaseTiles& tiles_;
  LabelTable& labels_;
  CompiledProgram& out_;
  ExchangeTiming timing_;
  std::optional<RankMessages> messages_;  // spread over ranks only
};

}  // namespace tilesim::sim::compile
